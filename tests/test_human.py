"""Human judgments through the real commands: a blind sheet from a results folder (systems hidden, same sentences for
every system, key kept apart), ratings validated row by row, per-system means, Krippendorff's alpha and metric
correlations, and the leaderboard's Human column and page; nothing that existed is rewritten."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from harness.cli import main
from harness.human.agreement import krippendorff_alpha_interval, pearson, spearman
from tests.text_task import make_text_task

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (ROOT / "data" / "udhr" / "dev.en").read_text(encoding="utf-8").splitlines()[:10]


def test_krippendorff_alpha_matches_the_published_example() -> None:
    """Krippendorff (2011), 'Computing Krippendorff's alpha-reliability', interval data: alpha = 0.849."""
    data = {"A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
            "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
            "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
            "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]}
    triples = [(r, str(u), float(v)) for r, vals in data.items() for u, v in enumerate(vals) if v is not None]
    assert krippendorff_alpha_interval(triples) == pytest.approx(0.849, abs=5e-4)
    assert krippendorff_alpha_interval([("a", "1", 3.0), ("b", "1", 3.0)]) is None  # no variation
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0) and spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1)


ECHO = '''
from harness.client.agent import ReadAction, TextAgent, WriteAction


class Echo(TextAgent):
    """Writes each source word after reading {k} more (a different system for each k)."""

    def policy(self, states):
        k = {k}
        if not states.source_finished and len(states.source) - len(states.target) < k:
            return ReadAction()
        if len(states.target) < len(states.source):
            return WriteAction(states.source[len(states.target)])
        return WriteAction("", finished=True)
'''


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A results folder with three systems (echo with lags 1, 2, 4) on one text board."""
    cfg = make_text_task(tmp_path, SOURCES)
    out = tmp_path / "results"
    runs = []
    for k in (1, 2, 4):
        agent = tmp_path / f"echo{k}.py"
        agent.write_text(ECHO.replace("{k}", str(k)), encoding="utf-8")
        run = out / f"echo{k}" / "dev"
        assert main(["run", "--config", str(cfg), "--dataset", "dev", "--agent", str(agent), "--output",
                     str(run)]) == 0
        runs.append({"submission": f"echo{k}", "team": "t", "system": f"echo{k}", "track": "text-en-es",
                     "dataset": "dev", "status": "ok", "scores": json.loads((run / "scores.json").read_text())})
    (out / "summary.json").write_text(json.dumps({"config_sha256": None, "runs": runs}), encoding="utf-8")
    return out


def test_sample_import_summarize_and_render(results: Path, tmp_path: Path, capsys) -> None:
    before = {p: p.read_bytes() for p in results.rglob("scores.json")}
    sheet = tmp_path / "sheet.csv"
    assert main(["human", "sample", str(results), "--per-system", "4", "--seed", "7", "--output", str(sheet)]) == 0
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    assert len(rows) == 12 and set(rows[0]) == {"item", "source", "hypothesis", "score"}
    text = sheet.read_text(encoding="utf-8")
    assert "echo1" not in text and "echo4" not in text  # blind: no system names in the sheet
    key = json.loads((results / "human" / "key.json").read_text())["items"]
    chosen = {(k["submission"], k["index"]) for k in key.values()}
    by_system = {s: {i for sub, i in chosen if sub == s} for s in ("echo1", "echo2", "echo4")}
    assert by_system["echo1"] == by_system["echo2"] == by_system["echo4"] and len(by_system["echo1"]) == 4

    rng = random.Random(3)
    ratings = tmp_path / "ratings.csv"
    with ratings.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["rater", "item", "score"])
        for item, k in key.items():
            base = {"echo1": 5, "echo2": 3, "echo4": 1}[k["submission"]]
            for rater in ("ann", "bob", "cyd"):
                w.writerow([rater, item, max(1, min(5, base + rng.choice([-1, 0, 0, 1])))])
    capsys.readouterr()
    assert main(["human", "import", str(results), str(ratings)]) == 0
    out = capsys.readouterr().out
    summary = json.loads((results / "human" / "summary.json").read_text())
    assert summary["ratings"] == 36 and summary["raters"] == 3
    # the correlations it computed are printed, with a caution: three systems are few
    assert "system-level correlation with the human means over 3 system(s) (Pearson, Spearman):" in out
    al = next(line.split() for line in out.splitlines() if line.split()[:1] == ["AL"])
    assert al[1:] == [f"{summary['correlations']['AL']['pearson']:+.3f}", "-1.000"]
    assert "caution: 3 systems are too few for these correlations to mean much (5 or more are wanted)" in out
    means = {k: v["mean"] for k, v in summary["systems"].items()}
    assert means["echo1/dev"] > means["echo2/dev"] > means["echo4/dev"]
    assert summary["krippendorff_alpha_interval"] > 0.5
    assert summary["correlations"]["AL"]["spearman"] == pytest.approx(-1.0)  # more lag, lower rating
    assert {p: p.read_bytes() for p in results.rglob("scores.json")} == before  # nothing rewritten

    from leaderboard.render import render_site

    index, _ = render_site(results, tmp_path / "site", None)
    html = index.read_text(encoding="utf-8")
    assert "Human" in html and 'href="human.html"' in html
    page = (tmp_path / "site" / "human.html").read_text(encoding="utf-8")
    assert "Krippendorff" in page and "echo4/dev" in page and "Spearman" in page


@pytest.mark.parametrize("row, message", [
    (["ann", "i99999", "3"], "row 2: unknown item 'i99999'"),
    (["ann", "i00001", "6"], "row 2: score 6 is out of range (1 to 5)"),
    (["ann", "i00001", "good"], "row 2: score 'good' is not an integer from 1 to 5"),
    (["", "i00001", "3"], "row 2: no rater"),
])
def test_bad_ratings_are_refused_in_one_line_naming_the_row(results, tmp_path, capsys, row, message) -> None:
    assert main(["human", "sample", str(results), "--per-system", "2", "--output", str(tmp_path / "s.csv")]) == 0
    capsys.readouterr()
    bad = tmp_path / "bad.csv"
    bad.write_text("rater,item,score\n" + ",".join(row) + "\n", encoding="utf-8")
    assert main(["human", "import", str(results), str(bad)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(bad) in err and err.count("\n") == 1
    assert not (results / "human" / "ratings.jsonl").exists()


def test_a_duplicate_rating_is_refused_even_across_imports(results, tmp_path, capsys) -> None:
    assert main(["human", "sample", str(results), "--per-system", "2", "--output", str(tmp_path / "s.csv")]) == 0
    first = tmp_path / "a.csv"
    first.write_text("rater,item,score\nann,i00001,4\n", encoding="utf-8")
    assert main(["human", "import", str(results), str(first)]) == 0
    again = tmp_path / "b.csv"
    again.write_text("rater,item,score\nbob,i00001,2\nann,i00001,5\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["human", "import", str(results), str(again)]) == 2
    assert "row 3: rater 'ann' already rated item 'i00001'" in capsys.readouterr().err
    assert len((results / "human" / "ratings.jsonl").read_text().splitlines()) == 1  # the first import stays
    assert main(["human", "sample", str(results), "--per-system", "2", "--output", str(tmp_path / "t.csv")]) == 2


def test_a_broken_ratings_file_is_one_line_naming_its_line(results, tmp_path, capsys) -> None:
    assert main(["human", "sample", str(results), "--per-system", "2", "--output", str(tmp_path / "s.csv")]) == 0
    first = tmp_path / "a.csv"
    first.write_text("rater,item,score\nann,i00001,4\n", encoding="utf-8")
    assert main(["human", "import", str(results), str(first)]) == 0
    ratings = results / "human" / "ratings.jsonl"
    with ratings.open("a", encoding="utf-8") as f:
        f.write('{"rater": "bob", "item"\n')
    capsys.readouterr()
    again = tmp_path / "b.csv"
    again.write_text("rater,item,score\nbob,i00002,2\n", encoding="utf-8")
    assert main(["human", "import", str(results), str(again)]) == 2
    err = capsys.readouterr().err
    assert f"{ratings}: line 2: ratings is not valid JSON" in err and err.count("\n") == 1


def test_primary_only_samples_only_primary_submissions(results: Path, tmp_path: Path, capsys) -> None:
    """`kind` as summary.json carries it from submission.yaml (primary by default): contrastive runs stay out."""
    path = results / "summary.json"
    summary = json.loads(path.read_text())
    kinds = {"echo1": "primary", "echo2": "contrastive"}  # echo4 declares none: primary, as submission.yaml's default
    for run in summary["runs"]:
        if run["submission"] in kinds:
            run["kind"] = kinds[run["submission"]]
    path.write_text(json.dumps(summary), encoding="utf-8")
    sheet = tmp_path / "primary.csv"
    assert main(["human", "sample", str(results), "--per-system", "3", "--primary-only", "--output", str(sheet)]) == 0
    assert "6 items from 2 system(s)" in capsys.readouterr().out
    key = json.loads((results / "human" / "key.json").read_text())
    assert key["primary_only"] is True
    assert {k["submission"] for k in key["items"].values()} == {"echo1", "echo4"}
    assert len(list(csv.DictReader(sheet.open(encoding="utf-8")))) == 6

    for run in summary["runs"]:
        run["kind"] = "contrastive"
    path.write_text(json.dumps(summary), encoding="utf-8")
    (results / "human" / "key.json").unlink()
    assert main(["human", "sample", str(results), "--primary-only", "--output", str(tmp_path / "none.csv")]) == 2
    err = capsys.readouterr().err
    assert "no scored run of a primary submission" in err and str(path) in err and err.count("\n") == 1
    assert main(["human", "sample", str(results), "--per-system", "2", "--output", str(tmp_path / "all.csv")]) == 0
    assert "6 items from 3 system(s)" in capsys.readouterr().out


def _fill(sheet: Path, out: Path, scores: dict[str, int]) -> None:
    """The sheet as its rater returns it: the score column filled for the items of `scores`, the others blank."""
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    with out.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["item", "source", "hypothesis", "score"])
        w.writeheader()
        for row in rows:
            w.writerow({**row, "score": scores.get(row["item"], "")})


def test_a_sheet_imported_again_as_it_is_filled_adds_only_its_new_rows(results: Path, tmp_path: Path,
                                                                        capsys) -> None:
    sheet = tmp_path / "sheet.csv"
    assert main(["human", "sample", str(results), "--per-system", "2", "--output", str(sheet)]) == 0
    items = [row["item"] for row in csv.DictReader(sheet.open(encoding="utf-8"))]
    assert len(items) == 6
    part = {item: 1 + n % 5 for n, item in enumerate(items[:3])}
    filled = tmp_path / "filled.csv"
    _fill(sheet, filled, part)
    capsys.readouterr()
    assert main(["human", "import", str(results), str(filled), "--rater", "ann"]) == 0
    assert "3 rating(s) added (3 row(s) without a score skipped)" in capsys.readouterr().out
    whole = {item: 1 + n % 5 for n, item in enumerate(items)}
    _fill(sheet, filled, whole)  # the rater finished the sheet: imported again, the first three rows included
    assert main(["human", "import", str(results), str(filled), "--rater", "ann"]) == 0
    out = capsys.readouterr().out
    assert "3 rating(s) added (3 row(s) imported before with the same score skipped); 6 by 1 rater(s)" in out
    log = results / "human" / "ratings.jsonl"
    taken = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted((r["item"], r["score"]) for r in taken) == sorted(whole.items())
    assert main(["human", "import", str(results), str(filled), "--rater", "ann"]) == 0  # nothing new: fine
    assert "0 rating(s) added (6 row(s) imported before with the same score skipped)" in capsys.readouterr().out

    changed = dict(whole, **{items[4]: whole[items[4]] % 5 + 1})  # one score changed: refused, nothing added
    _fill(sheet, filled, changed)
    before = log.read_bytes()
    assert main(["human", "import", str(results), str(filled), "--rater", "ann"]) == 2
    err = capsys.readouterr().err
    assert (f"row {items.index(items[4]) + 2}: rater 'ann' already rated item {items[4]!r} with {whole[items[4]]}, "
            f"not {changed[items[4]]}") in err and err.count("\n") == 1
    assert log.read_bytes() == before


def test_per_system_beyond_the_data_says_so(results: Path, tmp_path: Path, capsys) -> None:
    sheet = tmp_path / "sheet.csv"
    assert main(["human", "sample", str(results), "--per-system", "50", "--output", str(sheet)]) == 0
    out = capsys.readouterr().out
    assert ("--per-system 50 is more than the 10 instance(s) of text-en-es (dev) that all its 3 system(s) decoded: "
            "sampled all 10") in out
    assert "30 items from 3 system(s)" in out
