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
import yaml

from harness.scoring import score_path
from tests.evaluate_data.support import CONFIG, PROBE
from tests.templates_util import listening_url


def _serve_and_translate(out: Path, *extra: str, config: Path = CONFIG) -> tuple[str, dict]:
    """`harness server` on the tests' tiny task (3 sentences), the probe agent translating every sentence; returns
    the server's line once all were logged and GET /result's answer, then stops the server."""
    server = subprocess.Popen([sys.executable, "-m", "harness", "server", "--config", str(config), "--dataset", "dev",
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


def _with_domains(folder: Path) -> Path:
    """The tiny task with domains on dev: sentences 1-2 `news`, 3 `talks` (optional: out of the ranked scores)."""
    doc = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    dev = doc["tracks"][0]["datasets"]["dev"]
    dev["source"] = str(CONFIG.parent / dev["source"])
    dev["references"] = {k: str(CONFIG.parent / v) for k, v in dev["references"].items()}
    (folder / "dev.domains").write_text("1-2\tnews\n3\ttalks\n", encoding="utf-8")
    dev["domains"] = {"file": str(folder / "dev.domains"), "optional": ["talks"]}
    path = folder / "task.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _scores_of(log: Path, indices: set[int], folder: Path) -> dict:
    """`harness score` of `log` cut down to the instances `indices`."""
    folder.mkdir()
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if json.loads(line)["index"] in indices]
    (folder / "instances.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return score_path(folder / "instances.log")


def test_the_server_scores_each_domain_as_evaluate_does(tmp_path: Path) -> None:
    """scores.json and GET /result of a dataset with domains: each domain's scores are those of its instances
    alone, and the top-level (ranked) ones those of the main domain's, as `harness evaluate` writes them."""
    out = tmp_path / "run"
    done, result = _serve_and_translate(out, config=_with_domains(tmp_path))
    assert f"scores in {out / 'scores.json'}" in done, done
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    news = _scores_of(out / "instances.log", {0, 1}, tmp_path / "news")
    talks = _scores_of(out / "instances.log", {2}, tmp_path / "talks")
    assert set(scores["domains"]) == {"news", "talks"} and scores["domains"]["talks"]["optional"] is True
    for name, alone in (("news", news), ("talks", talks)):
        for metric in ("BLEU", "chrF", "LAAL"):
            assert scores["domains"][name][metric]["score"] == alone[metric]["score"], (name, metric)
    assert scores["BLEU"]["score"] == news["BLEU"]["score"] and scores["info"]["main_domains"] == ["news"]
    assert result["domains"] == scores["domains"] and result["BLEU"] == scores["BLEU"]  # GET /result: the same
    assert (out / "instance_scores.jsonl").is_file()
