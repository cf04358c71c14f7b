"""Who scores a `harness server` run: the server itself once every instance is logged (scores.json), or, with
`--no-score`, the caller (`harness evaluate` scores the collected log on its host); GET /result scores either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from harness.scoring import score_path
from tests.evaluate_data.support import CONFIG, PROBE
from tests.templates_util import listening_url


def _serve_and_translate(out: Path, *extra: str) -> tuple[str, dict]:
    """`harness server` on the tests' tiny task (3 sentences), the probe agent translating every sentence; returns
    the server's line once all were logged and GET /result's answer, then stops the server."""
    server = subprocess.Popen([sys.executable, "-m", "harness", "server", "--config", str(CONFIG), "--dataset", "dev",
                               "--port", "0", "--output", str(out), *extra], stderr=subprocess.PIPE, text=True)
    try:
        url = listening_url(server.stderr.readline())
        subprocess.run([sys.executable, str(PROBE), "copy"], check=True, capture_output=True, timeout=120,
                       env={**os.environ, "HARNESS_SERVER_URL": url})
        done = server.stderr.readline()  # written once every instance is logged (and scored, unless --no-score)
        result = requests.get(url + "/result", timeout=60)
        assert result.status_code == 200, result.text
        return done, result.json()
    finally:
        server.terminate()
        server.communicate(timeout=60)


@pytest.mark.parametrize("no_score", [False, True], ids=["server-scores", "caller-scores"])
def test_the_server_scores_unless_its_caller_does(tmp_path: Path, no_score: bool) -> None:
    out = tmp_path / "run"
    done, result = _serve_and_translate(out, *(["--no-score"] if no_score else []))
    assert done.startswith("harness server: all 3 instances logged"), done
    expected = score_path(out / "instances.log")
    assert result["BLEU"] == expected["BLEU"] and result["LAAL"] == expected["LAAL"]  # GET /result: the same
    if no_score:
        assert "scored by the caller" in done and not (out / "scores.json").exists()
    else:
        assert f"scores in {out / 'scores.json'}" in done
        assert json.loads((out / "scores.json").read_text(encoding="utf-8"))["BLEU"] == expected["BLEU"]
