"""Hostile and careless input at a real `harness portal`: a thousand wrong tokens, an oversized upload, archives
with a symlink or a decompression bomb, a submission.yaml too large to read whole, malformed JSON bodies, and a
queue that says why a job waits."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from harness.errors import HarnessError
from harness.portal.upload_client import upload
from tests.portal_support import Campaign, PortalProcess, api, harness, log_submission, make_campaign

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Campaign, PortalProcess]]:
    """A portal whose queue starts nothing (runs_per_team: 0) and takes uploads up to 1 MiB."""
    campaign = make_campaign(tmp_path_factory.mktemp("hostile"))
    text = campaign.config.read_text(encoding="utf-8").replace("runs_per_team: 2", "runs_per_team: 0")
    campaign.config.write_text(text.replace("max_upload_mb: 64", "max_upload_mb: 1"), encoding="utf-8")
    server = PortalProcess(campaign)
    try:
        yield campaign, server
    finally:
        server.stop()


def _archive(path: Path, members: list[tarfile.TarInfo], bodies: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info in members:
            tar.addfile(info, io.BytesIO(bodies[info.name]) if info.name in bodies else None)
    return path


def _file(name: str, body: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(body)
    return info, body


def test_a_queued_job_says_why_it_waits(paused, tmp_path: Path) -> None:
    campaign, server = paused
    token = campaign.token("alpha")
    env = {**os.environ, "HARNESS_PORTAL_TOKEN": token}
    proc = subprocess.run(harness("submit", str(log_submission(tmp_path / "s")), "--portal", server.url),
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    sub_id = proc.stdout.splitlines()[0].split()[3]
    job = api(server.url, token, f"submissions/{sub_id}").json()["jobs"][0]
    assert job["state"] == "queued" and job["position"] >= 1
    assert job["waiting"] == "the organizer has paused evaluations (runs_per_team: 0)"


def test_an_upload_over_the_cap_is_refused_before_a_byte_moves(paused, tmp_path: Path) -> None:
    campaign, server = paused
    big = tmp_path / "big.tar.gz"
    with big.open("wb") as f:
        f.truncate(2 * 1024**2)
    with pytest.raises(HarnessError) as refused:
        upload(f"{server.url}/api/v1/uploads", big, campaign.token("alpha"), {"filename": big.name})
    assert "creation refused (413)" in str(refused.value)
    assert not list((campaign.state / "uploads").glob("*.part"))


@pytest.mark.parametrize("what", ["symlink", "bomb", "yaml"])
def test_a_hostile_archive_is_one_line_and_leaves_nothing(paused, tmp_path: Path, what: str) -> None:
    campaign, server = paused
    yml = _file("submission.yaml", b"team: alpha\n")
    if what == "symlink":
        link = tarfile.TarInfo("weights.bin")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        archive = _archive(tmp_path / "a.tar.gz", [yml[0], link], {"submission.yaml": yml[1]})
        expected = "weights.bin"
    elif what == "bomb":  # 64 MiB of zeros compress to far under the 1 MiB upload cap
        zeros = tarfile.TarInfo("zeros.bin")
        zeros.size = 64 * 1024**2
        with tarfile.open(tmp_path / "a.tar.gz", "w:gz") as tar:
            tar.addfile(yml[0], io.BytesIO(yml[1]))
            tar.addfile(zeros, io.BytesIO(bytes(zeros.size)))
        archive, expected = tmp_path / "a.tar.gz", "zeros.bin"
    else:
        big = _file("submission.yaml", b"team: alpha\n" + b"# padding\n" * 40_000)
        archive = _archive(tmp_path / "a.tar.gz", [big[0]], {"submission.yaml": big[1]})
        expected = "submission.yaml: 400012 bytes; at most 256 KiB"
    before = sorted(p.name for p in (campaign.state / "submissions").iterdir())
    with pytest.raises(HarnessError) as refused:
        upload(f"{server.url}/api/v1/uploads", archive, campaign.token("alpha"), {"filename": archive.name})
    assert "(422)" in str(refused.value) and expected in str(refused.value), refused.value
    assert str(campaign.state) not in str(refused.value)  # no folder of the organizer's in the team's line
    assert sorted(p.name for p in (campaign.state / "submissions").iterdir()) == before


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b"x" * 70_000])
def test_a_malformed_body_is_one_line(paused, body: bytes) -> None:
    campaign, server = paused
    answer = requests.post(f"{server.url}/api/v1/admin/submissions/x/withdraw", data=body, timeout=60,
                           headers={"Authorization": f"Bearer {campaign.token('organizer')}"})
    assert answer.status_code in (400, 413) and list(answer.json()) == ["error"]
    assert "\n" not in answer.json()["error"]


def test_a_thousand_wrong_tokens_are_slowed_to_a_wait(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path / "c")
    good = campaign.token("alpha")
    server = PortalProcess(campaign)
    try:
        http = requests.Session()
        codes = [http.get(f"{server.url}/api/v1/me", headers={"Authorization": f"Bearer hpt_wrong{i}"},
                          timeout=60) for i in range(1000)]
        assert [c.status_code for c in codes[:20]] == [401] * 20
        assert {c.status_code for c in codes[20:]} == {429}
        assert codes[-1].json()["error"].startswith("too many failed sign-ins from 127.0.0.1: wait ")
        # the address waits, whatever it sends; a header naming another address changes nothing here
        spoofed = http.get(f"{server.url}/api/v1/me", timeout=60,
                           headers={"Authorization": f"Bearer {good}", "X-Real-IP": "198.51.100.7"})
        assert spoofed.status_code == 429
    finally:
        server.stop()
