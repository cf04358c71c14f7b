"""Images in the organizer's registry, pinned by digest, without Docker: the schema takes `build: {image:
REGISTRY/TEAM/NAME@sha256:HEX}` and refuses a tag; the `portal:` section's `registry`, `registry_url` and
`max_image_gb`; intake's check of a reference against a registry (a stand-in on loopback that checks the portal's
own pull token); the queue's pull configuration; and what `harness submit` reads as a local image."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness.errors import ConfigError, HarnessError, SubmissionError
from harness.images.checks import check_submission
from harness.intake.submission import load_submission, pinned_image
from harness.portal.phases import PortalSettings, load_portal_settings
from harness.portal.pinned import check_pinned, pull_config, remove_pull_config
from harness.portal.push import LocalImage, local_image, repository_component

DIGEST = "sha256:" + "ab" * 32
PHASES = """
portal:
  phases:
    - {name: dev, datasets: [dev], opens: 2020-01-01T00:00:00Z, closes: 2100-01-01T00:00:00Z}
"""


def _folder(root: Path, image: str, name: str = "sub") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"team": "alpha", "system": "asr", "contact": "a@example.org", "track": "text-en-es",
           "build": {"image": image}, "command": "python3 /app/agent.py"}
    (folder / "submission.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    return folder


def test_a_reference_pinned_by_digest_is_a_build_and_a_tag_is_refused(tmp_path: Path) -> None:
    ref = f"registry.example.org:5000/alpha/asr@{DIGEST}"
    sub = load_submission(_folder(tmp_path, ref))
    assert sub.build.image_ref == ref and sub.build.image_tar is None and sub.build.dockerfile is None
    assert check_submission(sub.path, use_docker=False).ok
    assert pinned_image(ref) is not None and pinned_image(ref).path == "alpha/asr"  # type: ignore[union-attr]
    for tagged in ("registry.example.org/alpha/asr:1", "alpha/asr", "asr:latest"):
        with pytest.raises(SubmissionError) as refused:
            load_submission(_folder(tmp_path, tagged, "tagged"))
        assert "build.image" in str(refused.value) and "names an image by tag: pin it by digest" in str(refused.value)
    for wrong in ("alpha/asr@sha256:12", "Alpha/asr@" + DIGEST, "alpha/asr@md5:" + "0" * 32):
        with pytest.raises(SubmissionError, match="is not an image reference pinned by digest"):
            load_submission(_folder(tmp_path, wrong, "wrong"))
    with pytest.raises(SubmissionError, match="file not found"):  # an archive's name is still a file's
        load_submission(_folder(tmp_path, "image.tar", "missing"))
    (tmp_path / "tar").mkdir()
    (tmp_path / "tar" / "image.tar").write_bytes(b"")
    assert load_submission(_folder(tmp_path, "image.tar", "tar")).build.image_tar is not None


def _settings(tmp_path: Path, extra: str) -> PortalSettings:
    config = tmp_path / "task.yaml"
    config.write_text(PHASES.replace("portal:\n", "portal:\n" + extra), encoding="utf-8")
    return load_portal_settings(config, {"dev"})


def test_the_portal_section_names_its_registry_and_image_cap(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "  registry: 127.0.0.1:5000\n  max_image_gb: 1.5\n")
    assert settings.registry == "127.0.0.1:5000" and settings.max_image_bytes == 1_500_000_000
    assert settings.registry_api() == "http://127.0.0.1:5000"
    assert _settings(tmp_path, "  registry: registry.example.org\n").registry_api() == "https://registry.example.org"
    behind = _settings(tmp_path, "  registry: registry.example.org\n  registry_url: http://127.0.0.1:5000/\n")
    assert behind.registry_api() == "http://127.0.0.1:5000"
    assert _settings(tmp_path, "").registry is None
    for extra, line in (("  registry: alpha\n", "portal.registry: 'alpha' is not a registry's address"),
                        ("  registry: https://r.example.org\n", "is not a registry's address"),
                        ("  registry_url: http://127.0.0.1:5000\n", "registry_url: only with registry:"),
                        ("  max_image_gb: 0\n", "max_image_gb: a number of gigabytes above 0")):
        with pytest.raises(ConfigError) as refused:
            _settings(tmp_path, extra)
        assert line in str(refused.value) and len(str(refused.value).splitlines()) == 1


class _Registry(http.server.BaseHTTPRequestHandler):
    """A registry's manifest endpoint: the manifest of `alpha/asr@DIGEST` to a token granting `pull` on it."""

    public_key = None
    manifest: dict = {}
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        import jwt

        self.seen.append(self.path)
        token = self.headers.get("Authorization", "").removeprefix("Bearer ")
        try:
            claims = jwt.decode(token, self.public_key, algorithms=["ES256"], audience="harness-registry")
        except jwt.PyJWTError:
            self.send_response(401)
            self.end_headers()
            return
        allowed = {(a["name"], tuple(a["actions"])) for a in claims["access"]}
        if self.path != f"/v2/alpha/asr/manifests/{DIGEST}" or ("alpha/asr", ("pull",)) not in allowed:
            self.send_response(404)
            self.end_headers()
            return
        body = json.dumps(self.manifest).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[str]:
    from harness.portal.registry import signing_key

    _Registry.public_key = signing_key(tmp_path).key.public_key()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_intake_takes_the_teams_own_image_that_the_registry_has_within_the_cap(tmp_path: Path, registry: str) -> None:
    _Registry.manifest = {"schemaVersion": 2, "config": {"size": 1000},
                          "layers": [{"size": 400_000_000}, {"size": 200_000_000}]}
    settings = _settings(tmp_path, f"  registry: {registry}\n  max_image_gb: 1\n")
    check_pinned(settings, tmp_path, f"{registry}/alpha/asr@{DIGEST}", "alpha")
    assert _Registry.seen[-1] == f"/v2/alpha/asr/manifests/{DIGEST}"
    cases = {f"{registry}/alpha/asr@sha256:{'0' * 64}": "the organizer's registry has no such image",
             f"{registry}/beta/asr@{DIGEST}": "not one of your team's repositories",
             f"other.example.org/alpha/asr@{DIGEST}": f"not in the organizer's registry ({registry})"}
    for ref, line in cases.items():
        with pytest.raises(HarnessError) as refused:
            check_pinned(settings, tmp_path, ref, "alpha")
        assert line in str(refused.value) and len(str(refused.value).splitlines()) == 1, str(refused.value)
    small = _settings(tmp_path, f"  registry: {registry}\n  max_image_gb: 0.5\n")
    with pytest.raises(HarnessError, match=r"its layers are 0\.60 GB compressed, over the portal's image size cap "
                                           r"of 0\.5 GB"):
        check_pinned(small, tmp_path, f"{registry}/alpha/asr@{DIGEST}", "alpha")
    with pytest.raises(HarnessError, match="this portal has no registry"):
        check_pinned(_settings(tmp_path, ""), tmp_path, f"{registry}/alpha/asr@{DIGEST}", "alpha")


def test_the_queues_pull_configuration_grants_pull_on_its_images_only(tmp_path: Path) -> None:
    import jwt

    from harness.portal.registry import signing_key

    key = signing_key(tmp_path).key.public_key()
    ours = _folder(tmp_path, f"127.0.0.1:5000/alpha/asr@{DIGEST}", "ours")
    elsewhere = _folder(tmp_path, f"other.example.org/beta/asr@{DIGEST}", "elsewhere")
    assert pull_config(tmp_path, None, [ours]) is None  # the portal has no registry
    assert pull_config(tmp_path, "127.0.0.1:5000", [elsewhere]) is None
    folder = pull_config(tmp_path, "127.0.0.1:5000", [ours, elsewhere])
    assert folder is not None and folder.parent == tmp_path / "registry"
    assert (folder / "config.json").stat().st_mode & 0o077 == 0
    auths = json.loads((folder / "config.json").read_text(encoding="utf-8"))["auths"]
    assert list(auths) == ["127.0.0.1:5000"]
    claims = jwt.decode(auths["127.0.0.1:5000"]["registrytoken"], key, algorithms=["ES256"],
                        audience="harness-registry")
    assert claims["sub"] == "organizer" and claims["access"] == [
        {"type": "repository", "name": "alpha/asr", "actions": ["pull"]}]
    remove_pull_config(folder)
    assert not folder.exists()


def test_submit_reads_an_archive_or_a_tag_as_a_local_image(tmp_path: Path) -> None:
    tar = _folder(tmp_path, "image.tar", "tar")
    (tar / "image.tar").write_bytes(b"")
    assert local_image(tar) == LocalImage("tar", "image.tar", tar / "image.tar")
    assert local_image(_folder(tmp_path, "my-system:3", "tag")) == LocalImage("tag", "my-system:3")
    assert local_image(_folder(tmp_path, f"r.example.org/alpha/asr@{DIGEST}", "pinned")) is None
    assert local_image(_folder(tmp_path, "missing.tar", "missing")) is None  # `harness check` says what is wrong
    assert repository_component("Probe.Image_2") == "probe-image-2" and repository_component("__") == "image"
