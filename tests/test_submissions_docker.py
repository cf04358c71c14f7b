"""Submission images with the real engine: build from a Dockerfile (context tar, .dockerignore, no network in RUN),
build failures, and `docker load` of image.tar with the digest recorded."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from harness.errors import SubmissionError
from harness.images import base as images
from harness.images.submission import LABEL_SUBMISSION, BuildError, build_submission_image
from harness.intake.submission import load_submission

pytestmark = pytest.mark.docker


def make(root: Path, name: str, dockerfile: str | None, files: dict[str, str] | None = None,
         build: str = "{dockerfile: Dockerfile}") -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "submission.yaml").write_text(
        f"team: t\nsystem: {name}\ntrack: text-en-es\nbuild: {build}\ncommand: cat /hello.txt\n")
    if dockerfile is not None:
        (folder / "Dockerfile").write_text(dockerfile)
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


@pytest.fixture()
def tags() -> list[str]:
    made: list[str] = []
    yield made
    for tag in made:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)


def test_build_from_base_image(tmp_path: Path, tags: list[str]) -> None:
    folder = make(tmp_path, "base-user", f"FROM {images.DEFAULT_TAG}\nCOPY agent.py /app/agent.py\n"
                  "RUN cat /proc/net/dev > /app/netdev\n",
                  {"agent.py": "print('agent')\n", "secret/weights.bin": "w", ".dockerignore": "secret\n"})
    sub = load_submission(folder)
    info = build_submission_image(sub, tmp_path / "out" / "build.log", tag="harness-test/sub-base:1")
    tags.append(info.tag)
    log = (tmp_path / "out" / "build.log").read_text()
    assert "Successfully" in log and "# image sha256:" in log and info.id in log
    assert info.id.startswith("sha256:") and info.digest == info.id
    assert info.architecture == images.host_architecture() and info.size > 50e6 and info.build_s > 0
    assert images.image_labels(info.tag)[LABEL_SUBMISSION] == "base-user"
    proc = subprocess.run(["docker", "run", "--rm", "--read-only", "--network", "none", info.id, "sh", "-c",
                           "id -u; cat /app/agent.py; cut -d: -f1 /app/netdev | tail -n +3; ls /app"],
                          capture_output=True, text=True, timeout=60)
    out = proc.stdout.split()
    assert out[0] == str(images.PARTICIPANT_UID) and "print('agent')" in proc.stdout
    assert [w for w in out if w in ("lo", "eth0")] == ["lo"], "RUN steps must have no network"
    assert "secret" not in proc.stdout


def test_the_same_sources_give_the_same_image_whatever_the_build_cache_holds(tmp_path: Path,
                                                                          tags: list[str]) -> None:
    """When two builds ran the same step, the engine holds two layers for it and its cache takes the newer one, so a
    plain rebuild of the first submission makes another image (and `--resume` would evaluate it again). The harness
    reuses the image built from the same sources instead; a fresh copy of the folder counts as the same sources, a
    changed file does not."""
    step = f"RUN head -c 32 /dev/urandom > /app/nonce  # {uuid.uuid4().hex}"
    (tmp_path / "clone1").mkdir()
    folder = make(tmp_path / "clone1", "same-sources", f"FROM {images.DEFAULT_TAG}\n{step}\nCOPY agent.py /app/\n",
                  {"agent.py": "print('agent')\n"})
    tag = "harness-test/same-sources:1"
    tags.extend([tag, "harness-test/same-step:1"])
    first = build_submission_image(load_submission(folder), tmp_path / "first.log", tag=tag)
    assert "Successfully built" in (tmp_path / "first.log").read_text()
    other = tmp_path / "other"
    other.mkdir()
    (other / "Dockerfile").write_text(f"FROM {images.DEFAULT_TAG}\n{step}\n")
    subprocess.run(["docker", "build", "--no-cache", "-q", "-t", "harness-test/same-step:1", str(other)],
                   check=True, capture_output=True, timeout=300)
    clone = tmp_path / "clone2" / "same-sources"
    shutil.copytree(folder, clone)  # new files, new times: an organizer's second checkout
    again = build_submission_image(load_submission(clone), tmp_path / "again.log", tag=tag)
    assert again.id == first.id and again.digest == first.digest
    assert "reused, not rebuilt" in (tmp_path / "again.log").read_text()
    assert images.inspect_image(tag)["Id"] == first.id
    (clone / "agent.py").write_text("print('agent 2')\n")
    changed = build_submission_image(load_submission(clone), tmp_path / "changed.log", tag=tag)
    assert changed.id != first.id and "Successfully built" in (tmp_path / "changed.log").read_text()


def test_two_builds_of_one_tag_at_once_each_get_their_own_image(tmp_path: Path, tags: list[str]) -> None:
    """Two folders of one submission id built at the same time (dev and test evaluated by two harnesses): each
    build is named by the id it made, not by the tag the other may have moved meanwhile."""
    from concurrent.futures import ThreadPoolExecutor

    tag = "harness-test/one-tag:1"
    tags.append(tag)
    for round_ in range(3):
        folders = {}
        for mark in ("a", "b"):
            root = tmp_path / f"{round_}{mark}"
            root.mkdir()
            folders[mark] = make(root, "one-tag", f"FROM scratch\nLABEL mark={mark}{round_}\nCOPY hello.txt /\n",
                                 {"hello.txt": f"{mark}{round_}"})
        with ThreadPoolExecutor(2) as pool:
            futures = {mark: pool.submit(build_submission_image, load_submission(folder),
                                         tmp_path / f"{round_}{mark}.log", tag=tag) for mark, folder in folders.items()}
            built = {mark: future.result() for mark, future in futures.items()}
        assert {mark: images.image_labels(info.id)["mark"] for mark, info in built.items()} == \
            {"a": f"a{round_}", "b": f"b{round_}"}


def test_build_failure_is_a_build_error_with_log(tmp_path: Path, tags: list[str]) -> None:
    command = f"not-a-command-{uuid.uuid4().hex[:12]}"  # names this build's intermediate container alone
    folder = make(tmp_path, "broken", f"FROM scratch\nCOPY hello.txt /\nRUN {command}\n", {"hello.txt": "hi"})
    tags.append("harness-test/broken:1")
    with pytest.raises(BuildError, match=r"Dockerfile: docker build failed: .* \(see .*build.log\)"):
        build_submission_image(load_submission(folder), tmp_path / "build.log", tag="harness-test/broken:1")
    assert "Step 3/" in (tmp_path / "build.log").read_text()
    assert containers_running(command) == [], "a failed build must not leave its intermediate container behind"


def containers_running(command: str) -> list[str]:
    """The engine's containers, running or not, whose command names `command` (other tests' are not this one's)."""
    listed = subprocess.run(["docker", "ps", "-a", "--no-trunc", "--format", "{{.ID}} {{.Command}}"],
                            capture_output=True, text=True, check=True).stdout.splitlines()
    return [line.split()[0] for line in listed if command in line]


def test_context_over_the_cap_is_refused_before_building(tmp_path: Path) -> None:
    folder = make(tmp_path, "fat", "FROM scratch\nCOPY . /\n", {"weights.bin": "0" * 50_000})
    with pytest.raises(SubmissionError, match="build context exceeds the cap"):
        build_submission_image(load_submission(folder), tmp_path / "build.log", tag="harness-test/fat:1",
                               max_context_bytes=10_000)
    assert not images.image_exists("harness-test/fat:1")


def test_load_image_tar_records_the_same_digest(tmp_path: Path, tags: list[str]) -> None:
    built = build_submission_image(load_submission(make(tmp_path, "scratch", "FROM scratch\nCOPY hello.txt /\n",
                                                        {"hello.txt": "hello from tar\n"})),
                                   tmp_path / "b1.log", tag="harness-test/scratch:1")
    tags.append(built.tag)
    loaded_dir = make(tmp_path, "from-tar", None, build="{image: image.tar}")
    subprocess.run(["docker", "save", "-o", str(loaded_dir / "image.tar"), built.tag], check=True)
    sub = load_submission(loaded_dir)
    info = build_submission_image(sub, tmp_path / "b2.log", tag="harness-test/from-tar:1")
    tags.append(info.tag)
    assert info.id == built.id and info.digest == built.digest and info.tag == "harness-test/from-tar:1"
    assert "Loaded image" in (tmp_path / "b2.log").read_text()
    proc = subprocess.run(["docker", "run", "--rm", "--network", "none", "--entrypoint", "/hello.txt", info.id],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0  # a text file is no executable: the image is the one we saved, nothing more
    with pytest.raises(SubmissionError, match="exceeds the cap"):
        build_submission_image(sub, tmp_path / "b3.log", tag="harness-test/from-tar:2", max_context_bytes=100)


def test_image_tar_that_is_not_an_image(tmp_path: Path) -> None:
    folder = make(tmp_path, "junk", None, {"image.tar": "junk"}, build="{image: image.tar}")
    with pytest.raises(SubmissionError, match="image.tar: cannot read image archive"):
        build_submission_image(load_submission(folder), tmp_path / "build.log", tag="harness-test/junk:1")


def test_image_tar_cannot_take_over_another_tag(tmp_path: Path, tags: list[str]) -> None:
    """A participant's image.tar tagged like an organizer image (here harness-test/victim:1) must not replace it."""
    mine = build_submission_image(load_submission(make(tmp_path, "mine", "FROM scratch\nCOPY a.txt /\n",
                                                       {"a.txt": "participant"})),
                                  tmp_path / "a.log", tag="harness-test/victim:1")
    tags.extend([mine.tag, "harness-test/hijack:1"])
    hijack_dir = make(tmp_path, "hijack", None, build="{image: image.tar}")
    subprocess.run(["docker", "save", "-o", str(hijack_dir / "image.tar"), "harness-test/victim:1"], check=True)
    victim = build_submission_image(load_submission(make(tmp_path, "victim", "FROM scratch\nCOPY b.txt /\n",
                                                         {"b.txt": "organizer"})),
                                    tmp_path / "b.log", tag="harness-test/victim:1")
    assert victim.id != mine.id
    loaded = build_submission_image(load_submission(hijack_dir), tmp_path / "c.log", tag="harness-test/hijack:1")
    assert loaded.id == mine.id
    assert images.image_info("harness-test/victim:1").id == victim.id
