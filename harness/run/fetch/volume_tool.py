"""What the harness does inside a fetch volume (standard library only; run with `python3 -c` in its base image).

    init UID GID      give the volume's root to the participant's user (the fetch container writes there)
    watch LIMIT       every half second, the bytes under the volume; past LIMIT print `over BYTES` and exit 3
    measure           print `bytes BYTES FILES` once

Bytes are each regular file's larger of its length and its blocks on disk (a sparse file counts its length),
symbolic links are not followed. The volume is mounted at `/volume` (read-only except for `init`).
"""

from __future__ import annotations

import os
import sys
import time

ROOT = "/volume"
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
    if mode == "watch":
        limit = int(argv[1])
        while True:
            total, _ = usage()
            if total > limit:
                print(f"over {total}", flush=True)
                return 3
            time.sleep(POLL_S)
    print(f"usage: init UID GID | watch LIMIT | measure (got {argv})", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
