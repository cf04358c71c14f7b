"""A new organizer's journey through the real commands (issue 26, items 7, 8, 13): a config check that finds every
mistake at once, a rating sheet that imports back as it was written and filled, an export that never overwrites."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.evaluate_data.support import CONFIG, make_submission
from tests.harness_cli import run_harness as harness
from tests.longform_support import udhr_talks, write_peer_inputs
from tests.text_task import make_text_task

LAGGED = '''from harness.client.agent import ReadAction, TextAgent, WriteAction


class Lagged(TextAgent):
    def policy(self, states):
        if not states.source_finished and len(states.source) - len(states.target) < {k}:
            return ReadAction()
        if len(states.target) < len(states.source):
            return WriteAction(states.source[len(states.target)])
        return WriteAction("", finished=True)
'''


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A results folder with two systems (lags 1 and 2) on one text board, made by `harness run`."""
    import json

    from harness.cli import main

    cfg = make_text_task(tmp_path)
    out = tmp_path / "results"
    runs = []
    for k in (1, 2):
        agent = tmp_path / f"lag{k}.py"
        agent.write_text(LAGGED.replace("{k}", str(k)), encoding="utf-8")
        run = out / f"lag{k}" / "dev"
        assert main(["run", "--config", str(cfg), "--dataset", "dev", "--agent", str(agent), "--output",
                     str(run)]) == 0
        runs.append({"submission": f"lag{k}", "team": "t", "system": f"lag{k}", "track": "text-en-es",
                     "dataset": "dev", "status": "ok", "scores": json.loads((run / "scores.json").read_text())})
    (out / "summary.json").write_text(json.dumps({"config_sha256": None, "runs": runs}), encoding="utf-8")
    return out


FIVE_MISTAKES = """task: t
tracks:
  - name: text-en-es
    modality: text
    source_lang: english
    target_lang: es
    regimes: [{name: low, max_latency: 3}, {name: low, max_latency: 6}]
    baseline: nobody
    datasets:
      dev: {source: dev.en, references: {orig: dev.es}}
      test: {source: test.en, references: {orig: missing/test.es}}
      extra: {source: dev.en, references: {}}
  - name: speech-en-es
    modality: speech
    source_lang: en
    target_lang: es
    datasets:
      dev: {source: speech/dev.list, references: {orig: dev.es}}
"""


def test_check_config_reports_every_mistake_at_once(tmp_path: Path) -> None:
    for name in ("dev.en", "dev.es", "test.en"):
        shutil.copy2(CONFIG.parent / name, tmp_path / name)
    cfg = tmp_path / "task.yaml"
    cfg.write_text(FIVE_MISTAKES, encoding="utf-8")
    make_submission(tmp_path / "subs", "waitk", "python3 probe_agent.py copy")
    proc = harness("check-config", str(cfg), str(tmp_path / "subs"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    expected = ["tracks[0].source_lang: 'english' is not a language code",
                "tracks[0].regimes[1].name: duplicate regime name 'low'",
                "tracks[0].datasets.test.references.orig: file not found",
                "tracks[0].datasets.extra.references: at least one reference set is required",
                "tracks[1].datasets.dev.source: file not found",
                "tracks[0].baseline: no submission has the id 'nobody' (ids: waitk)"]
    for text in expected:
        assert sum(text in line for line in lines) == 1, (text, proc.stdout)
    assert lines[-1] == f"{cfg}: 6 problems" and len(lines) == 7, proc.stdout
    assert "Traceback" not in proc.stderr
    same = harness("check", "--config", str(cfg))  # without a submission: the same check, baselines aside
    assert same.returncode == 1 and same.stdout.splitlines()[:-1] == [
        line for line in lines[:-1] if "baseline" not in line], same.stdout


def test_check_config_passes_a_good_config(tmp_path: Path) -> None:
    proc = harness("check-config", str(CONFIG))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"{CONFIG}: ok (1 track(s), 2 dataset(s)"), proc.stdout


def _fill(sheet: Path, filled: Path, rater_column: str | None = None) -> int:
    """The sheet as a rater returns it: every score filled (4), optionally a rater column added; the row count."""
    import csv

    rows = list(csv.DictReader(sheet.open(encoding="utf-8", newline="")))
    with filled.open("w", encoding="utf-8", newline="") as f:
        names = list(rows[0]) + (["rater"] if rater_column else [])
        writer = csv.DictWriter(f, fieldnames=names)
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "score": "4", **({"rater": rater_column} if rater_column else {})})
    return len(rows)


def test_the_sampled_sheet_imports_back_once_its_scores_are_filled(results: Path, tmp_path: Path, capsys) -> None:
    from harness.cli import main

    sheet = tmp_path / "sheet.csv"
    assert main(["human", "sample", str(results), "--per-system", "2", "--output", str(sheet)]) == 0
    untouched = tmp_path / "blank.csv"
    shutil.copy2(sheet, untouched)
    capsys.readouterr()
    assert main(["human", "import", str(results), str(untouched), "--rater", "ann"]) == 2  # nothing rated yet
    assert "no row has a score yet" in capsys.readouterr().err
    n = _fill(sheet, tmp_path / "ann.csv")
    assert main(["human", "import", str(results), str(tmp_path / "ann.csv")]) == 2  # who rated it?
    err = capsys.readouterr().err
    assert "--rater NAME" in err and err.count("\n") == 1, err
    assert main(["human", "import", str(results), str(tmp_path / "ann.csv"), "--rater", "ann"]) == 0
    _fill(sheet, tmp_path / "bob.csv", rater_column="bob")
    assert main(["human", "import", str(results), str(tmp_path / "bob.csv")]) == 0
    out = capsys.readouterr().out
    assert f"{n} rating(s) added; {2 * n} by 2 rater(s)" in out, out


def test_export_refuses_to_overwrite_unless_told(tmp_path: Path, capsys) -> None:
    import json

    from harness import interop
    from harness.cli import main

    peer_files = write_peer_inputs(udhr_talks(count=1, per_talk=6, seed=11), tmp_path / "peer")

    run = tmp_path / "run"
    run.mkdir()
    records = interop.attach_segmentation(interop.read_jsonl_hypotheses(peer_files["jsonl"]),
                                          peer_files["segmentation"], {"orig": peer_files["references"]})
    (run / "instances.log").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "om"
    assert main(["export", str(run), "--to", "omnisteval", "--output", str(out)]) == 0
    written = {p: p.read_bytes() for p in out.iterdir()}
    (out / "hypotheses.jsonl").write_text("hand-edited\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["export", str(run), "--to", "omnisteval", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert "not empty" in err and "--overwrite" in err and err.count("\n") == 1, err
    assert (out / "hypotheses.jsonl").read_text(encoding="utf-8") == "hand-edited\n"
    assert main(["export", str(run), "--to", "omnisteval", "--output", str(out), "--overwrite"]) == 0
    assert {p: p.read_bytes() for p in out.iterdir()} == written


def test_dsptv_is_shown_as_best_near_zero_not_lower_is_better(tmp_path: Path) -> None:
    """`harness score` writes DSPTV's direction, and `harness leaderboard` draws its arrow from it."""
    import json

    from harness.cli import main

    run = tmp_path / "results" / "waitk" / "dev"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "runs" / "udhr-dev-waitk3", run)
    assert main(["score", str(run), "--bootstrap", "1"]) == 0
    scores = json.loads((run / "scores.json").read_text(encoding="utf-8"))
    assert scores["DSPTV"]["direction"] == "zero"
    summary = {"config_sha256": None, "runs": [{"submission": "waitk", "team": "t", "system": "s", "dataset": "dev",
                                                "status": "ok", "track": "text-en-es", "scores": scores}]}
    (tmp_path / "results" / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    assert main(["leaderboard", str(tmp_path / "results"), "--output", str(tmp_path / "site")]) == 0
    pages = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "site").rglob("*.html"))
    import re

    arrows = re.findall(r">DSPTV(?:</abbr>)? <span class=\"arrow\"[^>]*>([^<]*)</span>", pages)
    assert arrows and set(arrows) == {"→0"}, arrows
    assert "closer to 0 is better" in pages
