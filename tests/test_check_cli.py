"""`harness check SUBMISSION_DIR`: one clear line per problem and a non-zero exit; a clean folder passes (without
Docker: `--no-docker`; the image checks are tests/test_check_cli_docker.py's)."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from harness.images import base as images
from tests.check_support import check, make

CONFIG = """\
task: demo
tracks:
  - name: text-en-es
    modality: text
    source_lang: en
    target_lang: es
    datasets:
      dev: {source: dev.en, references: {orig: dev.es}}
"""


def test_clean_submission_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make(tmp_path)
    (tmp_path / "task.yaml").write_text(CONFIG)
    rc, lines = check(capsys, str(folder), "--config", str(tmp_path / "task.yaml"), "--no-docker")
    assert rc == 0, lines
    assert lines[-1] == f"{folder}: passed"
    assert any("track 'text-en-es' is a track of task.yaml" in ln for ln in lines)
    assert not any(ln.startswith("error:") for ln in lines)


def test_schema_error_is_one_line_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make(tmp_path, yaml_extra="kind: final\n")
    rc, lines = check(capsys, str(folder), "--no-docker")
    assert rc == 1
    assert lines == [f"error: {folder}/submission.yaml: kind: 'final' is not one of primary, contrastive",
                     f"{folder}: 1 problem"]


def test_unknown_track_with_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make(tmp_path)
    (tmp_path / "task.yaml").write_text(CONFIG.replace("text-en-es", "speech-en-de"))
    rc, lines = check(capsys, str(folder), "--config", str(tmp_path / "task.yaml"), "--no-docker")
    assert rc == 1
    assert f"error: {folder}/submission.yaml: track: 'text-en-es' is not a track of {tmp_path / 'task.yaml'} " \
           f"(has: speech-en-de)" in lines


def test_missing_dockerfile_escaping_link_and_no_from(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make(tmp_path, dockerfile=None)
    rc, lines = check(capsys, str(folder), "--no-docker")
    assert rc == 1 and "build.dockerfile: file not found" in lines[0]
    (folder / "Dockerfile").write_text("# nothing\n")
    os.symlink("/etc", folder / "etc")
    rc, lines = check(capsys, str(folder), "--no-docker")
    errors = [ln for ln in lines if ln.startswith("error:")]
    assert rc == 1 and len(errors) == 2 and lines[-1].endswith("2 problems")
    assert "etc: symbolic link to '/etc' escapes the submission folder" in errors[0]
    assert errors[1] == f"error: {folder}/Dockerfile: no FROM line"


def test_context_cap_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make(tmp_path)
    (folder / "model.bin").write_bytes(b"0" * 4096)
    rc, lines = check(capsys, str(folder), "--no-docker", "--max-context-size", "2k")
    assert rc == 1 and any("build context exceeds the cap of 2.0 KiB" in ln for ln in lines)


def test_foreign_architecture_in_image_tar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make(tmp_path, build="{image: image.tar}", dockerfile=None)
    arch = "arm64" if images.host_architecture() != "arm64" else "amd64"
    with tarfile.open(folder / "image.tar", "w") as tar:
        for name, obj in (("c.json", {"architecture": arch, "os": "linux"}),
                          ("manifest.json", [{"Config": "c.json", "RepoTags": ["x:1"], "Layers": []}])):
            data = json.dumps(obj).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    rc, lines = check(capsys, str(folder), "--no-docker")
    assert rc == 1
    assert f"error: {folder}/image.tar: image architecture {arch} does not run on the " \
           f"{images.host_architecture()} evaluation machines" in lines


def test_copy_sources_must_be_in_the_context(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make(tmp_path, dockerfile=(
        f"FROM {images.DEFAULT_TAG} AS build\n"
        "COPY agent.py model*.bin /app/\n"
        "COPY --chown=participant \\\n    weights/ /app/weights/\n"
        'COPY ["lexicon.txt", "/app/"]\n'
        "COPY --from=build /app /srv\n"
        "ADD https://example.org/x.tar /tmp/\n"
        "COPY . /app/all\n"))
    (folder / "model-small.bin").write_text("m")
    (folder / "weights").mkdir()
    (folder / "weights" / "w.bin").write_text("w")
    (folder / ".dockerignore").write_text("weights\n")
    rc, lines = check(capsys, str(folder), "--no-docker", "-q")
    assert rc == 1
    assert [ln for ln in lines if ln.startswith("error:")] == [
        f"error: {folder}/Dockerfile:3: COPY weights/: not in the build context "
        f"(missing, or excluded by .dockerignore)",
        f"error: {folder}/Dockerfile:5: COPY lexicon.txt: not in the build context "
        f"(missing, or excluded by .dockerignore)",
    ]
