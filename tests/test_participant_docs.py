"""The participant's documentation runs as printed: the "Write an agent" example (README.md, or wherever a page of
the guide holds that heading) with the `harness run` command printed beside it; the "Iterate locally" server started
in the background stops by itself once the client is done; and the speech agent of docs/agents.md, which reads
`states.source_sample_rate`, hears a 22.05 kHz espeak-ng recording for the length it has."""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import soundfile

from tests.speech_task import make_task
from tests.viewer_support import free_port

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # each test runs the harness (seconds)
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _section(heading: str) -> tuple[Path, str]:
    """The text under the first heading (any level) that contains `heading`, in the README or a docs page."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        found = re.search(rf"^#+ [^\n]*{re.escape(heading)}[^\n]*\n(.*?)(?=^#+ |\Z)", text, re.S | re.M)
        if found:
            return page, found.group(1)
    raise AssertionError(f"no page has a heading with {heading!r}")


def _block(section: str, lang: str) -> str:
    found = re.search(rf"```{lang}\n(.*?)```", section, re.S)
    assert found, f"no ```{lang} block"
    return found.group(1)


def _readme_agent(tmp_path: Path) -> tuple[Path, list[str]]:
    """The "Write an agent" example saved as my_agent.py, and the `harness run` command printed with it ([]: none)."""
    _, section = _section("Write an agent")
    agent = tmp_path / "my_agent.py"
    agent.write_text(_block(section, "python"), encoding="utf-8")
    command = re.search(r"`(harness run [^`]*--agent my_agent\.py[^`]*)`", section)
    return agent, shlex.split(" ".join(command.group(1).split())) if command else []


def _in_tmp(argv: list[str], tmp_path: Path) -> list[str]:
    """The printed command with its repository paths made absolute and its output under `tmp_path`."""
    out = []
    for i, arg in enumerate(argv):
        if i and argv[i - 1] == "--output":
            arg = str(tmp_path / arg)
        elif arg.startswith("configs/"):
            arg = str(REPO / arg)
        out.append(arg)
    return [sys.executable, "-m", "harness", *out[1:]]


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "instances.log").read_text(encoding="utf-8").splitlines()]


def test_the_write_an_agent_example_runs_as_printed(tmp_path: Path) -> None:
    agent, argv = _readme_agent(tmp_path)
    assert argv[:2] == ["harness", "run"], "the example names the command that runs it"
    proc = subprocess.run(_in_tmp(argv, tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / argv[argv.index("--output") + 1]
    records = _records(out)
    k = int(argv[argv.index("--waitk") + 1])
    assert len(records) > 1 and (out / "scores.json").is_file()
    for rec in records:  # the stand-in copies the source, wait-k: its first word after k source words
        assert rec["status"] == "ok" and rec["prediction"] == rec["source"]
        assert rec["delays"][0] == min(k, rec["source_length"])


def test_the_background_server_of_iterate_locally_stops_by_itself(tmp_path: Path) -> None:
    agent, _ = _readme_agent(tmp_path)
    _, section = _section("Iterate locally")
    lines = _block(section, "bash").replace("\\\n", " ").splitlines()
    commands = [line.split("#")[0].strip() for line in lines]
    server = next(c for c in commands if c.startswith("harness server"))
    client = next(c for c in commands if c.startswith("harness client"))
    assert server.endswith("&") and "--exit-when-done" in server.split()
    port = str(free_port())
    server_argv = _in_tmp([port if a == "12321" else a for a in shlex.split(server.rstrip("& "))], tmp_path)
    client_argv = _in_tmp([a.replace("12321", port) for a in shlex.split(client)], tmp_path)
    proc = subprocess.Popen(server_argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        done = subprocess.run(client_argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert proc.wait(timeout=120) == 0  # the server ends on its own once every instance is logged and scored
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    out = tmp_path / server_argv[server_argv.index("--output") + 1]
    assert (out / "scores.json").is_file() and all(r["prediction"] == r["source"] for r in _records(out))


@pytest.mark.espeak
def test_the_speech_agent_of_the_docs_hears_a_22_khz_recording_at_its_rate(tmp_path: Path) -> None:
    page, section = _section("Audio comes at its file's own sample rate")
    assert page.parent.name == "docs" and "states.source_sample_rate" in section and "22.05 kHz" in section
    agent = tmp_path / "every_second.py"
    agent.write_text(_block(section, "python"), encoding="utf-8")
    config = make_task(tmp_path)
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--config", str(config), "--dataset", "dev",
                           "--agent", str(agent), "--output", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    wrong_at_16k = 0
    for rec in _records(out):
        info = soundfile.info(rec["source"][0] if isinstance(rec["source"], list) else rec["source"])
        assert info.samplerate == 22050  # what espeak-ng writes
        seconds = info.frames / info.samplerate
        assert rec["prediction"].split() == [f"{n}s" for n in range(1, math.ceil(seconds) + 1)]
        wrong_at_16k += math.ceil(info.frames / 16000) != math.ceil(seconds)
    assert wrong_at_16k  # an agent assuming 16 kHz would have written another number of words
