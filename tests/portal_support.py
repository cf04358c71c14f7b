"""A real `harness portal` for the portal's tests: a campaign on the demo task (absolute data paths, a `portal:`
section), two teams, tokens issued by the real command, the portal a child process on a free loopback port, and
a log submission built from the bundled SimulEval run (no Docker needed)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
LISTENING = "harness portal: listening on "
PHASES = """
portal:
  runs_per_team: 2
  max_upload_mb: 64
  phases:
    - {name: dev, datasets: [dev], opens: 2020-01-01T00:00:00Z, closes: 2100-01-01T00:00:00Z, results: team,
       limits: {per_day: 2, total: 10, at_once: 2, failures: 2}}
    - {name: test, datasets: [test], opens: 2100-01-01T00:00:00Z, closes: 2100-02-01T00:00:00Z, results: hidden}
"""
TEAMS = """teams:
  - {id: alpha, name: Alpha Lab, contacts: [a@example.org]}
  - {id: beta, name: Beta Group, contacts: [b@example.org]}
  - {id: organizers, name: Baselines, baseline: true}
"""


def harness(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", *args]


@dataclass
class Campaign:
    """A campaign's files: the task config, teams.yaml and the portal's state folder."""

    root: Path

    @property
    def config(self) -> Path:
        return self.root / "task.yaml"

    @property
    def teams(self) -> Path:
        return self.root / "teams.yaml"

    @property
    def state(self) -> Path:
        return self.root / "state"

    def token(self, owner: str, *extra: str) -> str:
        proc = subprocess.run(harness("portal", "token", owner, "--state", str(self.state), "--teams",
                                      str(self.teams), *extra), capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()


def make_campaign(root: Path) -> Campaign:
    root.mkdir(parents=True, exist_ok=True)
    demo = (ROOT / "configs" / "demo.yaml").read_text(encoding="utf-8")
    (root / "task.yaml").write_text(demo.replace("../data/", f"{ROOT}/data/") + PHASES, encoding="utf-8")
    (root / "teams.yaml").write_text(TEAMS, encoding="utf-8")
    return Campaign(root)


class PortalProcess:
    """`harness portal` as a child process; `url` once it listens."""

    def __init__(self, campaign: Campaign, *extra: str) -> None:
        self.campaign = campaign
        campaign.root.mkdir(parents=True, exist_ok=True)
        self.log = (campaign.root / "portal.log").open("a", encoding="utf-8")
        self.process = subprocess.Popen(
            harness("portal", "--config", str(campaign.config), "--teams", str(campaign.teams), "--state",
                    str(campaign.state), "--listen", "127.0.0.1:0", "--workers", "2", *extra),
            stdout=subprocess.PIPE, stderr=self.log, text=True)  # a file: a pipe nobody reads would fill and block
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith(LISTENING), line + self.log_text()
        self.url = line[len(LISTENING):].strip()

    def log_text(self) -> str:
        """What the portal wrote on standard error so far."""
        return (self.campaign.root / "portal.log").read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=120)
        self.log.close()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=60)


def log_submission(folder: Path, team: str = "alpha", system: str = "waitk-log") -> Path:
    """A log submission of the bundled SimulEval wait-3 run on dev."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "examples" / "runs" / "udhr-dev-waitk3" / "instances.log", folder / "dev.log")
    (folder / "submission.yaml").write_text(
        f"team: {team}\nsystem: {system}\ncontact: x@example.org\ntrack: text-en-es\nkind: primary\n"
        "logs: {dev: dev.log}\nhardware: \"1x CPU\"\n", encoding="utf-8")
    return folder


def api(url: str, token: str, path: str, method: str = "GET") -> requests.Response:
    return requests.request(method, f"{url}/api/v1/{path}", headers={"Authorization": f"Bearer {token}"},
                            timeout=60)


def wait_until_ended(url: str, token: str, submission: str, limit_s: float = 600) -> dict:
    """The submission once every job has ended (polled; the limit only bounds a hung test)."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        sub = api(url, token, f"submissions/{submission}").json()
        if all(j["state"] in ("scored", "failed", "cancelled", "withdrawn") for j in sub["jobs"]):
            return sub
        time.sleep(0.2)
    raise AssertionError(f"{submission} did not end within {limit_s} s")
