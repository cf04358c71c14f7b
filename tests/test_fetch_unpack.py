"""`volume_tool.py unpack`, the fill of a fetch volume on a swarm node, on real folders: the files with their
modes, links and owners, the stamp written last, a second fill with the same stamp a no-op, a new stamp a fresh copy
(what an interrupted or an older fill left is gone)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.run.fetch import volume_tool


def _source(root: Path) -> Path:
    src = root / "src"
    (src / "model" / "sub").mkdir(parents=True)
    (src / "model" / "weights.bin").write_bytes(b"w" * 5000)
    (src / "model" / "sub" / "secret-mode").write_text("x")
    os.chmod(src / "model" / "sub" / "secret-mode", 0o600)
    (src / "latest").symlink_to("model")
    os.chmod(src, 0o755)
    return src


def test_unpack_copies_once_per_stamp(tmp_path: Path) -> None:
    src, vol = _source(tmp_path), tmp_path / "vol"
    vol.mkdir()
    (vol / "half-written").write_text("left by a fill that was cut short")
    filled = "filled {} {}".format(*volume_tool.usage(str(src)))  # the source's bytes (blocks) and files
    assert filled.endswith(" 2")
    assert volume_tool.unpack("reg/harness/run@sha256:aa", str(vol), str(src)) == filled
    assert (vol / "model" / "weights.bin").read_bytes() == b"w" * 5000
    assert not (vol / "half-written").exists()
    assert os.readlink(vol / "latest") == "model"
    assert (vol / "model" / "sub" / "secret-mode").stat().st_mode & 0o777 == 0o600
    assert (vol / volume_tool.STAMP).read_text() == "reg/harness/run@sha256:aa"
    (vol / "model" / "weights.bin").write_bytes(b"changed")  # a second fill of the same stamp touches nothing
    assert volume_tool.unpack("reg/harness/run@sha256:aa", str(vol), str(src)) == "present"
    assert (vol / "model" / "weights.bin").read_bytes() == b"changed"
    assert volume_tool.unpack("reg/harness/run@sha256:bb", str(vol), str(src)) == filled  # a refetch
    assert (vol / "model" / "weights.bin").read_bytes() == b"w" * 5000


@pytest.mark.skipif(os.getuid() != 0, reason="giving files to another user needs root")
def test_unpack_keeps_the_fetch_users_ownership(tmp_path: Path) -> None:
    src, vol = _source(tmp_path), tmp_path / "vol"
    vol.mkdir()
    for folder, dirs, names in os.walk(src):
        for name in [*dirs, *names]:
            os.lchown(os.path.join(folder, name), 1000, 1000)
    os.chown(src, 1000, 1000)
    volume_tool.unpack("s", str(vol), str(src))
    for path in (vol, vol / "model", vol / "model" / "sub" / "secret-mode", vol / "latest"):
        st = path.lstat()
        assert (st.st_uid, st.st_gid) == (1000, 1000), path
