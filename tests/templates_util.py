"""Helpers shared by the template and adapter tests: run `harness run`, and `harness server` + `harness client`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from harness.layout import RunDir
from harness.protocol import LISTENING_LINE
from harness.runlog import read_records

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "configs" / "demo.yaml"
TEMPLATES = ROOT / "agent_templates"
#: the bundled speech dev utterances in the order the Whisper tests take them: 000 (9.9 s) and 002 (5.0 s) before
#: 001 (18.5 s), so that a test on two utterances has 15 s of speech to decode instead of 28 s (Whisper's decoding
#: is these tests' time)
DEV_ORDER = (0, 2, 1)


def dev_utterances(n: int) -> tuple[list[Path], list[str]]:
    """The first `n` utterances of the speech dev set in `DEV_ORDER` (then the list's order): their recordings
    (absolute paths) and Spanish references."""
    names = (ROOT / "data/speech/dev.list").read_text(encoding="utf-8").split()
    refs = (ROOT / "data/udhr/dev.es").read_text(encoding="utf-8").splitlines()
    order = [*DEV_ORDER, *(i for i in range(len(names)) if i not in DEV_ORDER)][:n]
    return [ROOT / "data/speech" / names[i] for i in order], [refs[i] for i in order]


def harness(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", *args]


def demo_text_dev(folder: Path, sentences: int) -> Path:
    """The demo config written into `folder` with its text track's dev set cut to its first `sentences` (source and
    references, side by side); every other path made absolute. Its path."""
    doc = yaml.safe_load(DEMO.read_text(encoding="utf-8"))
    folder.mkdir(parents=True, exist_ok=True)
    for track in doc["tracks"]:
        for name, ds in track["datasets"].items():
            ds["source"] = str((DEMO.parent / ds["source"]).resolve())
            ds["references"] = {k: str((DEMO.parent / v).resolve()) for k, v in ds["references"].items()}
            if track["name"] != "text-en-es" or name != "dev":
                continue
            for key, path in [("source", ds["source"]), *ds["references"].items()]:
                cut = folder / f"dev-{key}{Path(path).suffix}"
                lines = Path(path).read_text(encoding="utf-8").splitlines()[:sentences]
                cut.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
                if key == "source":
                    ds["source"] = str(cut)
                else:
                    ds["references"][key] = str(cut)
    config = folder / "demo.yaml"
    config.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return config


def joint_run(config: Path, track: str, agent: Path, out: Path, *extra: str, timeout: float = 600) -> None:
    """`harness run` (in-process) into `out`."""
    subprocess.run(harness("run", "--config", str(config), "--track", track, "--dataset", "dev", "--agent",
                           str(agent), "--output", str(out), *extra), check=True, capture_output=True, timeout=timeout)


def listening_url(line: str) -> str:
    """The URL in `harness server`'s first line ("harness server: listening on URL (...)")."""
    assert line.startswith(LISTENING_LINE), line
    return line[len(LISTENING_LINE):].split()[0]


def http_run(config: Path, track: str, agent: Path, out: Path, *extra: str, timeout: float = 600) -> None:
    """`harness server` and `harness client --transport http` as two processes over loopback HTTP."""
    server = subprocess.Popen(harness("server", "--config", str(config), "--track", track, "--dataset", "dev",
                                      "--port", "0", "--output", str(out), "--exit-when-done"),
                              stderr=subprocess.PIPE, text=True)
    try:
        url = listening_url(server.stderr.readline())
        subprocess.run(harness("client", "--server", url, "--transport", "http", "--agent", str(agent), *extra),
                       check=True, capture_output=True, timeout=timeout)
        server.wait(60)
        assert server.returncode == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)


def records(out: Path) -> dict[int, tuple]:
    """index → (prediction, delays, status, revisions' texts) of a run's instances.log."""
    result = {}
    for r in read_records(RunDir(out).instances_log):
        revisions = tuple(x["text"] for x in r.get("revisions") or [])
        result[r["index"]] = (r["prediction"], r["delays"], r["status"], revisions)
    return result


def comparable_scores(out: Path) -> dict:
    """Every metric of scores.json that does not depend on wall-clock time."""
    scores = json.loads(RunDir(out).scores.read_text(encoding="utf-8"))
    return {k: v for k, v in scores.items() if isinstance(v, dict) and "score" in v and not k.endswith("_CA")}
