"""A submission archive is checked whole before anything of it is extracted (harness/portal/archive.py), and the
client packs a folder deterministically (harness/portal/upload_client.py's pack_folder)."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.portal.archive import ArchiveLimits, check_archive, extract_checked
from harness.portal.upload_client import pack_folder


class Zeros(io.RawIOBase):
    """`size` zero bytes, made as they are read (a big member that the test never holds)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def file_member(name: str, data: bytes) -> tuple[tarfile.TarInfo, io.BytesIO]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, io.BytesIO(data)


def zeros_member(name: str, size: int) -> tuple[tarfile.TarInfo, Zeros]:
    info = tarfile.TarInfo(name)
    info.size = size
    return info, Zeros(size)


def special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    return info, None


def write_tar(path: Path, members: list[tuple[tarfile.TarInfo, io.IOBase | None]], gz: bool = True) -> Path:
    with path.open("wb") as raw:
        out = gzip.GzipFile(fileobj=raw, mode="wb") if gz else raw
        with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for info, data in members:
                tar.addfile(info, data)
        if gz:
            out.close()
    return path


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `root`, by relative path."""
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(root.rglob("*"))}


def good() -> list[tuple[tarfile.TarInfo, io.IOBase | None]]:
    return [file_member("README.md", b"# sub\n"), file_member("agent/main.py", b"print('hi')\n")]

REFUSED: dict[str, tuple[Callable[[], list[tuple[tarfile.TarInfo, io.IOBase | None]]], ArchiveLimits, str]] = {
    "traversal": (lambda: [*good(), file_member("../x", b"evil")], ArchiveLimits(),
                  "member '../x': a path with '..'"),
    "traversal inside": (lambda: [file_member("agent/../../x", b"evil")], ArchiveLimits(),
                         "member 'agent/../../x': a path with '..'"),
    "absolute": (lambda: [file_member("/etc/cron.d/x", b"evil")], ArchiveLimits(),
                 "member '/etc/cron.d/x': an absolute path"),
    "symlink": (lambda: [*good(), special("agent/data", tarfile.SYMTYPE, "/etc")], ArchiveLimits(),
                "member 'agent/data': a symbolic link"),
    "hardlink": (lambda: [*good(), special("agent/passwd", tarfile.LNKTYPE, "/etc/passwd")], ArchiveLimits(),
                 "member 'agent/passwd': a hard link"),
    "device": (lambda: [special("agent/mem", tarfile.CHRTYPE)], ArchiveLimits(), "member 'agent/mem': a device"),
    "fifo": (lambda: [special("agent/pipe", tarfile.FIFOTYPE)], ArchiveLimits(), "member 'agent/pipe': a fifo"),
    "too many members": (lambda: [file_member(f"f{i}.txt", b"x") for i in range(11)], ArchiveLimits(max_members=10),
                         "more than 10 members (member 'f10.txt')"),
    "too large unpacked": (lambda: [file_member("a.bin", os.urandom(600)), file_member("b.bin", os.urandom(600))],
                           ArchiveLimits(max_unpacked=1000),
                           "member 'b.bin' brings the unpacked size to 1200 bytes, more than 1000"),
    "twice": (lambda: [file_member("a.txt", b"1"), file_member("a.txt", b"2")], ArchiveLimits(),
              "member 'a.txt': a.txt is in the archive twice"),
    "file as folder": (lambda: [file_member("a", b"1"), file_member("a/b", b"2")], ArchiveLimits(),
                       "member 'a/b': its folder a is a file of the archive"),
    # 32 MiB of zeros (about 32 KiB of gzip); the member's size is allowed, the decompressed bytes are not
    "gzip bomb": (lambda: [*good(), zeros_member("zeros.bin", 32 << 20)],
                  ArchiveLimits(max_unpacked=1 << 30, max_decompressed=1 << 20),
                  "decompresses to more than 1048576 bytes (a compression bomb?): refused, reading stopped there"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_bad_archive_is_refused_with_one_line_and_nothing_is_extracted(case: str, tmp_path: Path) -> None:
    build, limits, line = REFUSED[case]
    archive = write_tar(tmp_path / "sub.tar.gz", build())
    dest = tmp_path / "out" / "sub"
    with pytest.raises(HarnessError) as refused:
        extract_checked(archive, dest, limits)
    message = str(refused.value)
    assert message == f"sub.tar.gz: {line}" or message.startswith(f"sub.tar.gz: {line} ("), message
    assert "\n" not in message
    assert not dest.exists()
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []
    with pytest.raises(HarnessError):
        check_archive(archive, limits)


def test_the_bomb_is_small_on_disk_and_stops_at_the_cap(tmp_path: Path) -> None:
    """The refusal comes from the cap on decompressed bytes, not from the sizes the headers declare."""
    archive = write_tar(tmp_path / "bomb.tar.gz", [zeros_member("zeros.bin", 32 << 20)])
    assert archive.stat().st_size < 256 << 10
    check_archive(archive, ArchiveLimits(max_unpacked=1 << 30))  # with the default cap it is a fine archive
    with pytest.raises(HarnessError, match="decompresses to more than 1048576 bytes"):
        check_archive(archive, ArchiveLimits(max_unpacked=1 << 30, max_decompressed=1 << 20))


def test_a_huge_pax_header_is_refused_before_tarfile_reads_it(tmp_path: Path) -> None:
    info, data = file_member("a.txt", b"1")
    info.pax_headers = {"comment": "x" * (128 << 10)}
    archive = write_tar(tmp_path / "pax.tar", [(info, data)], gz=False)
    with pytest.raises(HarnessError, match=r"pax.tar: a pax header of \d+ bytes \(at most 65536\) before member"):
        check_archive(archive)


@pytest.mark.parametrize("content", [b"", b"not a tar archive at all, just text" * 40], ids=["empty", "text"])
def test_what_is_not_a_tar_archive_is_one_line(content: bytes, tmp_path: Path) -> None:
    archive = tmp_path / "sub.tar.gz"
    archive.write_bytes(content)
    with pytest.raises(HarnessError, match=r"^sub.tar.gz: (empty file, )?not a tar archive"):
        extract_checked(archive, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def test_a_truncated_archive_is_refused(tmp_path: Path) -> None:
    whole = write_tar(tmp_path / "whole.tar", [file_member("a.bin", os.urandom(5000))], gz=False).read_bytes()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(whole[:3000])
    with pytest.raises(HarnessError, match="cut.tar: the archive ends in the middle of a member"):
        extract_checked(cut, tmp_path / "dest")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.tar", "whole.tar"]


def make_submission(root: Path) -> Path:
    (root / "agent" / "__pycache__").mkdir(parents=True)
    (root / "agent" / "__pycache__" / "main.cpython-311.pyc").write_bytes(b"\0compiled")
    (root / "agent" / "main.py").write_text("print('hi')\n", encoding="utf-8")
    (root / "run.sh").write_text("#!/bin/sh\nexec python3 agent/main.py\n", encoding="utf-8")
    (root / "run.sh").chmod(0o700)
    (root / "empty").mkdir()
    (root / "data").mkdir()
    (root / "data" / "weights.bin").write_bytes(os.urandom(300_000))
    (root / "submission.yaml").write_text("team: t\n", encoding="utf-8")
    return root


def test_a_packed_folder_extracts_exactly_without_pycache(tmp_path: Path) -> None:
    folder = make_submission(tmp_path / "sub")
    archive = pack_folder(folder, tmp_path / "sub.tar.gz")
    dest = extract_checked(archive, tmp_path / "unpacked" / "sub")
    expected = {k: v for k, v in tree(folder).items() if "__pycache__" not in k}
    assert tree(dest) == expected
    assert os.access(dest / "run.sh", os.X_OK) and not os.access(dest / "submission.yaml", os.X_OK)
    assert sorted(p.name for p in dest.parent.iterdir()) == ["sub"]  # no temporary folder left beside it
    with pytest.raises(HarnessError, match="already exists"):
        extract_checked(archive, dest)


def test_packing_depends_on_the_files_only(tmp_path: Path) -> None:
    folder = make_submission(tmp_path / "sub")
    first = pack_folder(folder, tmp_path / "one.tar.gz").read_bytes()
    for path in folder.rglob("*"):
        os.utime(path, (1_000_000, 1_000_000))
    assert pack_folder(folder, tmp_path / "two.tar.gz").read_bytes() == first
    with tarfile.open(tmp_path / "one.tar.gz") as tar:
        names = tar.getnames()
        assert names == sorted(names)
        assert {(m.uid, m.gid, m.uname, m.gname, m.mtime) for m in tar.getmembers()} == {(0, 0, "", "", 0)}


def test_packing_refuses_a_symbolic_link(tmp_path: Path) -> None:
    folder = make_submission(tmp_path / "sub")
    (folder / "link").symlink_to("/etc/passwd")
    with pytest.raises(HarnessError, match="link: a symbolic link or special file cannot go into a submission"):
        pack_folder(folder, tmp_path / "sub.tar.gz")
