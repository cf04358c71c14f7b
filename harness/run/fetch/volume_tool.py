"""What the harness does inside a fetch volume (standard library only; run with `python3 -c` in its base image).

    init UID GID      give the volume's root to the participant's user (the fetch container writes there)
    watch LIMIT       every half second, the bytes under the volume; past LIMIT print `over BYTES` and exit 3
    measure           print `bytes BYTES FILES` once
    unpack STAMP      (on a swarm node) fill the volume from the fetched image's files at `/harness-fetched`,
                      unless it holds `STAMP` already; the stamp file is written last, so a fill that was cut
                      short is made again; prints `present` or `filled BYTES FILES`

Bytes are each regular file's larger of its length and its blocks on disk (a sparse file counts its length),
symbolic links are not followed. The volume is mounted at `/volume` (read-only except for `init`).
"""

from __future__ import annotations

import os
import shutil
import sys
import time

ROOT = "/volume"
SOURCE = "/harness-fetched"
STAMP = ".harness-fetch-stamp"
POLL_S = 0.5


def usage(root: str = ROOT) -> tuple[int, int]:
    """(bytes, files) under `root`."""
    total = files = 0
    for folder, _dirs, names in os.walk(root):
        for name in names:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue  # removed meanwhile
            if not os.path.islink(os.path.join(folder, name)):
                total += max(st.st_size, st.st_blocks * 512)
                files += 1
    return total, files


def _clear(root: str) -> None:
    for name in os.listdir(root):
        path = os.path.join(root, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def _copy_owners(src: str, dst: str) -> None:
    """Give every copied entry its source's owner (the fetch's user); modes and times came with copy2."""
    for folder, dirs, names in os.walk(src):
        for name in [*dirs, *names, ""]:
            here = os.path.join(folder, name) if name else folder
            st = os.lstat(here)
            os.lchown(os.path.join(dst, os.path.relpath(here, src)), st.st_uid, st.st_gid)


def unpack(stamp: str, root: str = ROOT, source: str = SOURCE) -> str:
    """Fill `root` from `source` unless it holds `stamp`; what was done."""
    marker = os.path.join(root, STAMP)
    if os.path.isfile(marker) and open(marker, encoding="utf-8").read() == stamp:
        return "present"
    _clear(root)
    for name in os.listdir(source):
        src, dst = os.path.join(source, name), os.path.join(root, name)
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.copytree(src, dst, symlinks=True)
        else:
            shutil.copy2(src, dst, follow_symlinks=False)
    _copy_owners(source, root)
    st = os.stat(source)
    os.chmod(root, st.st_mode & 0o7777)
    total, files = usage(root)
    with open(marker, "w", encoding="utf-8") as f:  # last; a stamp cut short matches nothing: filled again
        f.write(stamp)
    return f"filled {total} {files}"


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else ""
    if mode == "init":
        os.chmod(ROOT, 0o755)  # while root still owns it (no CAP_FOWNER needed)
        os.chown(ROOT, int(argv[1]), int(argv[2]))
        return 0
    if mode == "measure":
        total, files = usage()
        print(f"bytes {total} {files}", flush=True)
        return 0
    if mode == "unpack":
        print(unpack(argv[1]), flush=True)
        return 0
    if mode == "watch":
        limit = int(argv[1])
        while True:
            total, _ = usage()
            if total > limit:
                print(f"over {total}", flush=True)
                return 3
            time.sleep(POLL_S)
    print(f"usage: init UID GID | watch LIMIT | measure | unpack STAMP (got {argv})", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
