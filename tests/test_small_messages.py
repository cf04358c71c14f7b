"""The small ones of issue 32 (item 12), each through the real command: a syntax error in the agent is one line
with its file and line; `taks:` suggests `task`; `--dataset devv` suggests `dev`; a primary metric missing from
its track's list is an error; `harness leaderboard RUN_DIR` points to `harness view`; `harness score FOLDER`
without instances.log names the `--segmentation` form; AP's definition gives the range its values take; and the
interval of a latency that cannot be negative does not reach below 0."""

from __future__ import annotations

import json
from pathlib import Path

from tests.harness_cli import run_harness as harness
from tests.text_task import make_task


def test_a_syntax_error_in_the_agent_is_one_line_with_file_and_line(tmp_path: Path) -> None:
    cfg = make_task(tmp_path)
    agent = tmp_path / "broken.py"
    agent.write_text("from harness.client.agent import TextAgent\n\nclass A(TextAgent:\n    pass\n", encoding="utf-8")
    proc = harness("run", "--config", str(cfg), "--dataset", "dev", "--output", str(tmp_path / "run"),
                   "--agent", str(agent))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert f"{agent}:3: SyntaxError:" in proc.stderr
    assert "importlib" not in proc.stderr and "Traceback" not in proc.stderr


def test_a_misspelt_top_level_field_suggests_the_missing_one(tmp_path: Path) -> None:
    cfg = make_task(tmp_path)
    cfg.write_text(cfg.read_text(encoding="utf-8").replace("task: t", "taks: t"), encoding="utf-8")
    proc = harness("check-config", str(cfg))
    assert proc.returncode != 0
    assert "taks: unknown field; did you mean 'task'?" in proc.stdout + proc.stderr


def test_a_misspelt_dataset_suggests_the_dataset(tmp_path: Path) -> None:
    cfg = make_task(tmp_path)
    agent = tmp_path / "a.py"
    agent.write_text("from harness.client.agent import TextAgent, ReadAction\n\nclass A(TextAgent):\n"
                     "    def policy(self, states):\n        return ReadAction()\n", encoding="utf-8")
    ran = harness("run", "--config", str(cfg), "--dataset", "devv", "--output", str(tmp_path / "run"),
                  "--agent", str(agent))
    validated = harness("validate", str(tmp_path / "nosub"), "--config", str(cfg), "--dataset", "devv",
                        "--no-docker")
    for proc in (ran, validated):
        assert proc.returncode == 2, proc.stderr
        assert "a dataset 'devv'; did you mean 'dev'?" in proc.stderr.replace("no dataset", "a dataset"), proc.stderr


def test_a_primary_metric_missing_from_the_lists_is_an_error(tmp_path: Path) -> None:
    cfg = make_task(tmp_path)
    text = cfg.read_text(encoding="utf-8").replace(
        "    target_lang: es\n", "    target_lang: es\n    quality: [BLEU]\n    latency: [AL]\n"
                                  "    primary: {quality: chrF, latency: LAAL}\n")
    cfg.write_text(text, encoding="utf-8")
    proc = harness("check-config", str(cfg))
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "tracks[0].primary.quality: chrF is not in the track's quality list [BLEU]" in out, out
    assert "tracks[0].primary.latency: LAAL is not in the track's latency list [AL]" in out, out


def _run_folder(tmp_path: Path) -> Path:
    cfg = make_task(tmp_path)
    agent = tmp_path / "echo.py"
    agent.write_text("from harness.client.agent import TextAgent, ReadAction, WriteAction\n\nclass E(TextAgent):\n"
                     "    def policy(self, states):\n        if not states.source_finished:\n"
                     "            return ReadAction()\n"
                     "        return WriteAction(' '.join(states.source), finished=True)\n", encoding="utf-8")
    run = tmp_path / "run"
    proc = harness("run", "--config", str(cfg), "--dataset", "dev", "--output", str(run), "--agent", str(agent))
    assert proc.returncode == 0, proc.stderr
    return run


def test_leaderboard_of_a_run_folder_points_to_view(tmp_path: Path) -> None:
    run = _run_folder(tmp_path)
    proc = harness("leaderboard", str(run), "--output", str(tmp_path / "site"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"harness view {run}" in proc.stderr


def test_score_of_a_folder_without_a_log_names_the_segmentation_form(tmp_path: Path) -> None:
    (tmp_path / "talk.jsonl").write_text("{}\n", encoding="utf-8")
    proc = harness("score", str(tmp_path))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "no instances.log" in proc.stderr and "--segmentation YAML --references FILE" in proc.stderr


def _log(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _record(i: int, source_words: int, delays: list[int], reference: str) -> dict:
    prediction = " ".join(f"w{k}" for k in range(len(delays)))
    return {"index": i, "prediction": prediction, "delays": delays, "elapsed": [float(d) for d in delays],
            "prediction_length": len(delays), "reference": reference, "source_length": source_words,
            "source": " ".join(f"s{k}" for k in range(source_words))}


def test_ap_definition_gives_the_range_its_values_take(tmp_path: Path) -> None:
    """An output twice its reference's length, written at the end: AP is 2, and its definition says so."""
    log = _log(tmp_path / "instances.log", [_record(i, 4, [4] * 8, "r0 r1 r2 r3") for i in range(3)])
    proc = harness("score", str(log), "--format", "json", "--no-write")
    assert proc.returncode == 0, proc.stderr
    ap = json.loads(proc.stdout)["AP"]
    assert ap["score"] == 2.0
    assert "(0–1)" not in ap["definition"] and "above 1" in ap["definition"], ap["definition"]


def test_an_unsigned_latencys_interval_does_not_reach_below_zero(tmp_path: Path) -> None:
    """18 instances lag 3 words; 2 write 400 words after reading 1 of 40 (LAAL about -19): the mean is positive,
    and resamples with 3 or more of the two are below 0; the interval starts at 0, EndOffset's stays signed."""
    records = [_record(i, 3, [3, 3, 3], "r0 r1 r2") for i in range(18)]
    records += [_record(18 + i, 40, [1] * 400, " ".join(["r"] * 40)) for i in range(2)]
    log = _log(tmp_path / "instances.log", records)
    proc = harness("score", str(log), "--format", "json", "--no-write")
    assert proc.returncode == 0, proc.stderr
    scores = json.loads(proc.stdout)
    laal = scores["LAAL"]
    assert laal["score"] > 0 and laal["ci95"][0] == 0.0, laal
    assert scores["EndOffset"]["ci95"][0] < 0  # signed by definition: written before the end of the source
