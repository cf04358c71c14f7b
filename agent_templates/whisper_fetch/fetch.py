"""The fetch step of whisper_fetch: Whisper tiny.en in faster-whisper's format (CTranslate2), from a model hub.

Run by the harness once per image, before any data is seen, with egress only through its allow-listing proxy
(`HTTPS_PROXY`/`HTTP_PROXY`, which urllib follows): each file of the repository `$WHISPER_REPO` is downloaded from
`$HF_ENDPOINT/REPO/resolve/main/FILE` (the Hugging Face layout; `HF_TOKEN`, an organizer secret, goes as a bearer
token when set) into `$HARNESS_FETCH_DIR/faster-whisper-tiny.en/`, each through a partial file renamed when whole.
Standard library only: the image needs no download client.
"""

from __future__ import annotations

import os
import sys
import urllib.request

FILES = ("config.json", "model.bin", "tokenizer.json", "vocabulary.txt")  # a faster-whisper model folder
CHUNK = 1 << 20


def download(url: str, target: str, token: str | None) -> int:
    """Copy `url` to `target` (via `target.part`); its size."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    size = 0
    with urllib.request.urlopen(request, timeout=120) as answer, open(target + ".part", "wb") as out:
        while chunk := answer.read(CHUNK):
            out.write(chunk)
            size += len(chunk)
    os.replace(target + ".part", target)
    return size


def main() -> int:
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    repo = os.environ.get("WHISPER_REPO", "Systran/faster-whisper-tiny.en")
    folder = os.path.join(os.environ["HARNESS_FETCH_DIR"], "faster-whisper-tiny.en")
    os.makedirs(folder, exist_ok=True)
    for name in FILES:
        size = download(f"{endpoint}/{repo}/resolve/main/{name}", os.path.join(folder, name),
                        os.environ.get("HF_TOKEN"))
        print(f"fetched {repo}/{name}: {size} bytes", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
