"""`harness submit`, the team's side: check the folder here, pack it, upload it (resumable: an interrupted upload
continues where it stopped when the command runs again), say what it counts against, and with `--wait` follow it
to its scores. A folder handing in an image (image.tar, or a tag on the local engine) to a portal with a registry
has the image pushed there first and names it by digest (harness.portal.push)."""

from __future__ import annotations

import hashlib
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests

from harness.cache import cache_dir
from harness.errors import HarnessError
from harness.portal.push import check_here, local_image, push_image
from harness.portal.upload_client import UploadProgress, pack_folder, upload

TOKEN_VARIABLE = "HARNESS_PORTAL_TOKEN"
TOKEN_FILE = Path("~/.config/harness/portal-token")
FINAL = ("scored", "failed", "cancelled", "withdrawn")
#: an upload the portal refused (not one cut off on the way, which the next run of the command resumes)
REFUSED = re.compile(r"refused \(4\d\d\)")


def read_token(env: dict[str, str] | None = None, file: Path = TOKEN_FILE) -> str:
    """The team's token: $HARNESS_PORTAL_TOKEN, else a file only its owner may read."""
    env = dict(os.environ) if env is None else env
    if env.get(TOKEN_VARIABLE, "").strip():
        return env[TOKEN_VARIABLE].strip()
    path = file.expanduser()
    try:
        info = path.stat()
    except OSError:
        raise HarnessError(f"no token: set {TOKEN_VARIABLE}, or put it in {path} (chmod 600)") from None
    if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        raise HarnessError(f"{path}: others may read it: chmod 600 {path}")
    return path.read_text(encoding="utf-8").strip()


class PortalClient:
    """The portal's API with the team's token; every refusal is a HarnessError with the portal's line."""

    def __init__(self, base: str, token: str, timeout: float = 60.0) -> None:
        self.base, self.token, self.timeout = base.rstrip("/"), token, timeout
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {token}"

    def get(self, path: str) -> Any:
        try:
            answer = self.http.get(f"{self.base}/api/v1/{path}", timeout=self.timeout)
        except requests.RequestException as exc:
            raise HarnessError(f"{self.base}: the portal does not answer ({type(exc).__name__})") from None
        if answer.status_code != 200:
            raise HarnessError(f"{self.base}: {_line(answer)}")
        return answer.json()


def _line(answer: requests.Response) -> str:
    try:
        return str(answer.json()["error"])
    except (ValueError, KeyError, TypeError):
        return f"HTTP {answer.status_code}"


def submit(folder: Path, portal: str, token: str, wait: bool, out: Callable[[str], None] = print,
           poll_s: float = 2.0, push_only: bool = False) -> int:
    """Check, upload and (with `wait`) follow one submission; the exit code (0: every dataset scored). A folder
    whose `build.image` is an image.tar or a local image's tag has its image pushed to the portal's registry
    first and is uploaded naming it by digest (`harness.portal.push`); `push_only` stops after the push."""
    client = PortalClient(portal, token)
    local = local_image(folder)
    if local is None and push_only:
        raise HarnessError(f"{folder}: --push-only: submission.yaml's build.image names no local image (an "
                           f"image.tar in the folder, or a tag on this engine)")
    with tempfile.TemporaryDirectory(prefix="harness-submit-") as tmp:
        if local is not None:
            me = _open_phase(client)
            staged = push_image(folder, local, client, me, Path(tmp), out, push_only)
            if staged is None:
                return 0
            folder = staged
        check_here(folder, out)
        if local is None:
            _open_phase(client)
        archive = pack_folder(folder, Path(tmp) / "submission.tar.gz")
        url = _upload(client, archive)
    upload_id = url.rstrip("/").rsplit("/", 1)[-1]
    sub = client.get(f"uploads/{upload_id}/submission")
    out(f"harness submit: submission {sub['id']} (phase {sub['phase']}, track {sub['track']}): "
        + ", ".join(f"{j['dataset']} {j['state']}" for j in sub["jobs"]))
    me = client.get("me")
    out("harness submit: counts against " + "; ".join(_counter(n, c) for n, c in me["counters"].items()))
    if not wait:
        return 0
    return follow(client, sub["id"], out, poll_s)


def _open_phase(client: PortalClient) -> dict[str, Any]:
    """`GET /me` when a phase is open and none of the team's limits is reached; else a HarnessError."""
    me = client.get("me")
    phase = me.get("phase")
    if phase is None:
        raise HarnessError(f"{client.base}: no phase is open now")
    full = [f"{name} {c['used']} of {c['limit']}" for name, c in me["counters"].items()
            if c["limit"] is not None and c["used"] >= c["limit"]]
    if full:
        raise HarnessError(f"phase {phase['name']}: limit reached: {full[0]}")
    return dict(me)


def _counter(name: str, c: dict[str, Any]) -> str:
    used = f"{c['used']} of {c['limit']}" if c["limit"] is not None else f"{c['used']} (no limit)"
    return f"{name} {used}" + (f", resets {c['resets_at']}" if c.get("resets_at") else "")


def _upload(client: PortalClient, archive: Path) -> str:
    """Upload `archive`, resuming the upload an interrupted run of this command left for the same bytes."""
    from harness.portal.upload_client import sha256_file

    key = hashlib.sha256(f"{client.base}\n{client.token}".encode()).hexdigest()[:16]
    memo = cache_dir() / "submit" / f"{key}-{sha256_file(archive).hex()}.url"  # this portal, this team, these bytes
    resume = memo.read_text(encoding="utf-8").strip() if memo.is_file() else None
    memo.parent.mkdir(parents=True, exist_ok=True)

    def shown(p: UploadProgress) -> None:
        if not memo.is_file():
            memo.write_text(p.url, encoding="utf-8")
        done = 40 * p.offset // max(1, p.length)
        sys.stderr.write(f"\rupload [{'#' * done}{'.' * (40 - done)}] {p.offset / 1e6:.1f}/{p.length / 1e6:.1f} MB")
        sys.stderr.flush()

    try:
        url = upload(f"{client.base}/api/v1/uploads", archive, client.token, {"filename": archive.name},
                     resume=resume, progress=shown, session=client.http)
    except HarnessError as exc:
        if REFUSED.search(str(exc)):  # the portal refused it: nothing left to resume
            memo.unlink(missing_ok=True)
        raise
    sys.stderr.write("\n")
    memo.unlink(missing_ok=True)
    return url


def follow(client: PortalClient, submission: str, out: Callable[[str], None], poll_s: float) -> int:
    """Print each job's state as it changes until every job has ended; then its scores or its failure."""
    seen: dict[str, str] = {}
    while True:
        sub = client.get(f"submissions/{submission}")
        for job in sub["jobs"]:
            where = job["state"] + (f" (position {job['position']})" if "position" in job else "") + (
                f" {job['done']}/{job['total']}" if job["state"] == "running" and job["total"] else "")
            if seen.get(job["id"]) != where:
                seen[job["id"]] = where
                out(f"harness submit: {submission} {job['dataset']}: {where}")
        if all(job["state"] in FINAL for job in sub["jobs"]):
            break
        time.sleep(poll_s)
    for job in sub["jobs"]:
        if job["state"] == "scored":
            scores = job.get("scores")
            shown = ", ".join(f"{k} {v:.2f}" for k, v in (scores or {}).items() if isinstance(v, (int, float)))
            out(f"harness submit: {job['dataset']}: " + (shown or "scored (results hidden until the reveal)"))
        else:
            out(f"harness submit: {job['dataset']}: {job['state']}"
                + (f" ({job.get('failure')}): {job.get('reason')}" if job.get("failure") else ""))
    return 0 if all(job["state"] == "scored" for job in sub["jobs"]) else 1
