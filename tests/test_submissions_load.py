"""submission.yaml → Submission, and the build-context scan: errors name the file and the field."""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
from pathlib import Path

import pytest

from harness.errors import SubmissionError
from harness.images.context import scan_context, write_context
from harness.images.submission import read_image_tar, submission_tag, uses_base_image
from harness.intake.submission import load_submission

VALID = """\
team: Team-A
system: waitk.3
contact: a@example.org
track: text-en-es
kind: contrastive
description: wait-k with k=3
build: {dockerfile: Dockerfile}
command: harness client --agent /app/agent.py
"""


def make(tmp_path: Path, yaml_text: str = VALID, name: str = "team-a-waitk",
         files: dict[str, str] | None = None) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "submission.yaml").write_text(yaml_text, encoding="utf-8")
    for rel, text in (files if files is not None else {"Dockerfile": "FROM harness-base:latest\n"}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def test_valid_submission_is_typed(tmp_path: Path) -> None:
    sub = load_submission(make(tmp_path))
    assert (sub.id, sub.team, sub.system, sub.track, sub.kind) == ("team-a-waitk", "Team-A", "waitk.3",
                                                                    "text-en-es", "contrastive")
    assert sub.command == ("/bin/sh", "-c", "harness client --agent /app/agent.py")
    assert sub.build.dockerfile == (tmp_path / "team-a-waitk" / "Dockerfile").resolve()
    assert sub.build.image_tar is None and sub.baseline is False
    assert submission_tag(sub) == "harness-submission/team-a-waitk:latest"
    assert uses_base_image(sub.build.dockerfile)


def test_list_command_and_defaults(tmp_path: Path) -> None:
    text = "team: t\nsystem: s\ntrack: x\nbuild: {image: image.tar}\ncommand: [python3, /app/run.py]\nbaseline: true\n"
    sub = load_submission(make(tmp_path, text, files={"image.tar": ""}) / "submission.yaml")
    assert sub.command == ("python3", "/app/run.py")
    assert sub.kind == "primary" and sub.baseline is True and sub.contact == ""
    assert sub.build.image_tar is not None and sub.build.image_tar.name == "image.tar"


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda t: t.replace("team: Team-A\n", ""), "team: missing required field"),
        (lambda t: t.replace("kind: contrastive", "kind: final"), "kind: 'final' is not one of"),
        (lambda t: t + "gpu: yes\n", "gpu: unknown field"),
        (lambda t: t.replace("system: waitk.3", "system: 'a b'"), "system: 'a b' must be"),
        (lambda t: t.replace("{dockerfile: Dockerfile}", "{dockerfile: Dockerfile, image: x.tar}"),
         "build: give exactly one of dockerfile or image"),
        (lambda t: t.replace("{dockerfile: Dockerfile}", "{dockerfile: ../Dockerfile}"),
         "build.dockerfile: '../Dockerfile' points outside"),
        (lambda t: t.replace("{dockerfile: Dockerfile}", "{dockerfile: Missing}"), "build.dockerfile: file not found"),
        (lambda t: t.replace("command: harness client --agent /app/agent.py", "command: 3"), "command: expected"),
        (lambda t: t + "baseline: maybe\n", "baseline: expected true or false"),
        (lambda t: "- a list\n", "top level: expected a mapping"),
        (lambda t: t.replace("team: Team-A", "team: " + "T" * 5_000_000), "team: 5000000 characters; at most 64"),
        (lambda t: t + "description: " + "d" * 2001 + "\n", "description: 2001 characters; at most 2000"),
    ],
)
@pytest.mark.slow
def test_errors_name_file_and_field(tmp_path: Path, edit, where: str) -> None:
    folder = make(tmp_path, edit(VALID))
    with pytest.raises(SubmissionError) as err:
        load_submission(folder)
    msg = str(err.value)
    assert msg.startswith(f"{folder / 'submission.yaml'}: ") and where in msg and "\n" not in msg
    assert len(msg) < len(str(folder)) + 240  # a one-line error (the known fields listed), never the whole value


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    folder = make(tmp_path, "team: t\nsystem: [unclosed\n")
    with pytest.raises(SubmissionError, match=r"submission.yaml: line \d+: invalid YAML"):
        load_submission(folder)


def test_missing_yaml_and_folder(tmp_path: Path) -> None:
    with pytest.raises(SubmissionError, match="submission folder not found"):
        load_submission(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SubmissionError, match="submission.yaml: file not found"):
        load_submission(tmp_path / "empty")


def test_scan_honours_dockerignore_and_keeps_the_dockerfile(tmp_path: Path) -> None:
    folder = make(tmp_path, files={"Dockerfile": "FROM scratch\n", "agent.py": "x = 1\n", "models/big.bin": "0" * 5000,
                                   "models/keep.txt": "k", "notes/a.md": "a",
                                   ".dockerignore": "models\n!models/keep.txt\n**/*.md\nDockerfile\n"})
    scan = scan_context(folder, always=("Dockerfile",))
    # an excluded folder is not sent itself, but a re-included file inside it is (as docker's CLI does)
    assert set(scan.paths) == {".dockerignore", "Dockerfile", "agent.py", "models/keep.txt", "notes",
                               "submission.yaml"}
    assert scan.size == sum((folder / p).stat().st_size for p in scan.paths if (folder / p).is_file())


def test_bytecode_caches_are_never_sent_but_loose_pyc_files_are(tmp_path: Path) -> None:
    # running the agent on the host writes __pycache__ beside it; the image must not depend on whether it ran
    folder = make(tmp_path, files={"Dockerfile": "FROM scratch\n", "agent.py": "x = 1\n",
                                   "__pycache__/agent.cpython-311.pyc": "b", "lib/__pycache__/m.cpython-311.pyc": "b",
                                   "lib/m.py": "y = 2\n", "closed.pyc": "b"})
    scan = scan_context(folder, always=("Dockerfile",))
    assert set(scan.paths) == {"Dockerfile", "agent.py", "closed.pyc", "lib", "lib/m.py", "submission.yaml"}
    (folder / ".dockerignore").write_text("!lib/__pycache__\n", encoding="utf-8")
    kept = scan_context(folder, always=("Dockerfile",)).paths
    assert "lib/__pycache__/m.cpython-311.pyc" in kept and "__pycache__" not in kept, "the folder's own file decides"


def test_the_context_tar_holds_exactly_the_scan_and_links_as_links(tmp_path: Path) -> None:
    folder = make(tmp_path, files={"Dockerfile": "FROM scratch\n", "agent.py": "x = 1\n", "big.bin": "0" * 100,
                                   ".dockerignore": "*.bin\n"})
    os.symlink("agent.py", folder / "alias.py")
    scan = scan_context(folder, always=("Dockerfile",))
    buf = io.BytesIO()
    write_context(scan, buf)
    head = tarfile.TarInfo.frombuf(buf.getvalue()[:512], "utf-8", "surrogateescape")
    assert head.name == "." and head.isdir(), "the CLI needs a plain header first to see an archive"
    buf.seek(0)
    with tarfile.open(fileobj=buf, mode="r:") as tar:
        members = {m.name: m for m in tar.getmembers() if m.name != "."}
        assert set(members) == set(scan.paths) and "big.bin" not in members
        assert members["alias.py"].issym() and members["alias.py"].linkname == "agent.py"
        assert tar.extractfile(members["agent.py"]).read() == b"x = 1\n"


def test_scan_size_cap(tmp_path: Path) -> None:
    folder = make(tmp_path, files={"Dockerfile": "FROM scratch\n", "weights.bin": "0" * 10_000})
    assert scan_context(folder, max_bytes=20_000).size > 10_000
    with pytest.raises(SubmissionError, match="build context exceeds the cap of 9.8 KiB"):
        scan_context(folder, max_bytes=10_000)


def test_links_inside_are_kept_links_outside_are_refused(tmp_path: Path) -> None:
    folder = make(tmp_path, files={"Dockerfile": "FROM scratch\n", "data/model.bin": "m"})
    os.symlink("data/model.bin", folder / "inside")
    os.symlink(folder / "data", folder / "inside-dir")
    assert {"inside", "inside-dir"} <= set(scan_context(folder).paths)
    (tmp_path / "secret").write_text("s")
    os.symlink("../data/../../secret", folder / "data" / "escape")
    with pytest.raises(SubmissionError, match=r"data/escape: symbolic link to .* escapes the submission folder"):
        scan_context(folder)


def test_absolute_link_out_and_special_files_are_refused(tmp_path: Path) -> None:
    folder = make(tmp_path, files={"Dockerfile": "FROM scratch\n"})
    os.symlink("/etc/passwd", folder / "passwd")
    with pytest.raises(SubmissionError, match="escapes the submission folder"):
        scan_context(folder)
    (folder / "passwd").unlink()
    os.mkfifo(folder / "pipe")
    with pytest.raises(SubmissionError, match="pipe: not a regular file"):
        scan_context(folder)


def _image_tar(path: Path, configs: list[dict]) -> Path:
    with tarfile.open(path, "w") as tar:
        manifest = []
        for i, cfg in enumerate(configs):
            data = json.dumps(cfg).encode()
            info = tarfile.TarInfo(f"cfg{i}.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            manifest.append({"Config": f"cfg{i}.json", "RepoTags": [f"img{i}:latest"], "Layers": []})
        data = json.dumps(manifest).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


def test_read_image_tar(tmp_path: Path) -> None:
    tar = _image_tar(tmp_path / "image.tar", [{"architecture": "arm64", "os": "linux"}, {"architecture": "amd64"}])
    assert read_image_tar(tar) == [{"tags": "img0:latest", "architecture": "arm64", "os": "linux"},
                                   {"tags": "img1:latest", "architecture": "amd64", "os": ""}]
    (tmp_path / "bad.tar").write_bytes(b"not a tar at all")
    with pytest.raises(SubmissionError, match="bad.tar: cannot read image archive"):
        read_image_tar(tmp_path / "bad.tar")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("system:", "sytem:"), "sytem: unknown field; did you mean 'system'?"),
        (lambda t: t.replace("command:", "Command:"), "Command: unknown field; did you mean 'command'?"),
        (lambda t: t.replace("kind: contrastive", "kind: Primary"),
         "kind: 'Primary' is not one of primary, contrastive; did you mean 'primary'?"),
        (lambda t: t + "extra: 1\n", "extra: unknown field (known: team, system, contact, track, kind, "
                                     "description, build, command, baseline, interface, port, "
                                     "speech_processor_config, logs, hardware, models, prepare, fetch, replaces)"),
        (lambda t: t.replace("{dockerfile: Dockerfile}", "{docker_file: Dockerfile}"),
         "build.docker_file: unknown field; did you mean 'dockerfile'?"),
    ],
)
def test_unknown_field_suggests_the_known_one(tmp_path: Path, edit, message: str) -> None:
    folder = make(tmp_path, edit(VALID))
    with pytest.raises(SubmissionError) as err:
        load_submission(folder)
    assert str(err.value) == f"{folder / 'submission.yaml'}: {message}"


def test_a_tag_is_a_valid_reference_and_ids_never_share_one(tmp_path: Path) -> None:
    """Capitals, control characters and separators Docker refuses (`_-`, `..`) give a valid tag, ending in the id's
    hash whenever the tag is not the id itself, so `Team-A` and `team-a` keep apart."""
    from dataclasses import replace

    base = load_submission(make(tmp_path))
    ids = ["team-a", "Team-A", "TEAM-A", "ring\x07\x1b[31mred", "a_-b", "a..b", "x" * 300]
    tags = [submission_tag(replace(base, id=i)) for i in ids]
    assert tags[0] == "harness-submission/team-a:latest" and len(set(tags)) == len(tags), tags
    component = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
    assert all(re.fullmatch(rf"harness-submission/{component}:latest", t) and len(t) < 140 for t in tags), tags
