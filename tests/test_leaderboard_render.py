"""`harness leaderboard` on a real results directory: pages, offline-ness, escaping, ranking, downloads."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.config import load_config
from harness.runlog.reader import validate_record
from leaderboard.model import load_results, slugify
from leaderboard.plots import Point, pareto_front, quality_latency_svg
from leaderboard.render import render_site
from tests.leaderboard_fixture import HARNESS_RUNS, SPEECH_RUNS, TEXT_RUNS, XSS_TEAM, XSS_TEXT

EXTERNAL = re.compile(r"https?:|(?:src|href|action)\s*=\s*[\"']?//|url\(\s*[\"']?(?:https?:|//)|@import", re.I)


@pytest.fixture(scope="module")
def site(fixture_results: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    results, config = fixture_results
    out = tmp_path_factory.mktemp("site") / "site"
    assert main(["leaderboard", str(results), "--output", str(out), "--config", str(config)]) == 0
    return out


def _summary(results: Path) -> dict:
    return json.loads((results / "summary.json").read_text(encoding="utf-8"))


def test_every_run_and_instance_has_a_page(site: Path, fixture_results: tuple[Path, Path]) -> None:
    results, _ = fixture_results
    assert (site / "index.html").is_file()
    for run in _summary(results)["runs"]:
        page = site / "runs" / slugify(f"{run['submission']}-{run['dataset']}") / "index.html"
        assert page.is_file(), page
        log = results / run["submission"] / run["dataset"] / "instances.log"
        if run["status"] == "build_error":
            assert not log.exists()
            continue
        for line in log.read_text(encoding="utf-8").splitlines():
            assert (page.parent / "instances" / f"{json.loads(line)['index']}.html").is_file()


def test_no_external_url_anywhere_in_the_site(site: Path) -> None:
    files = [p for p in site.rglob("*") if p.is_file()]
    assert any(p.suffix == ".css" for p in files) and any(p.suffix == ".js" for p in files)
    for p in files:
        if p.suffix in (".html", ".css", ".js", ".svg"):
            text = p.read_text(encoding="utf-8")
            m = EXTERNAL.search(text)
            assert m is None, f"{p}: {text[max(m.start() - 60, 0): m.end() + 60]!r}"


def test_team_name_and_hypothesis_with_script_tags_are_escaped(site: Path) -> None:
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in index
    assert "&lt;script&gt;window.__pwned = &#34;team&#34;&lt;/script&gt;Tag Team" in index
    run_dir = site / "runs" / slugify("tag-team-wait2-test")
    inst = (run_dir / "instances" / "0.html").read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in inst
    assert "&lt;script&gt;window.__pwned = &#34;hypothesis&#34;&lt;/script&gt;" in inst
    blob = re.search(r'<script type="application/json" id="timeline-data">(.*?)</script>', inst, re.S)
    assert blob and "<script" not in blob.group(1)  # jinja's tojson escapes < > & inside the JSON block
    assert XSS_TEXT in " ".join(json.loads(blob.group(1))["tokens"])
    assert XSS_TEAM not in (run_dir / "index.html").read_text(encoding="utf-8")


def test_regime_tables_rank_by_primary_quality(fixture_results: tuple[Path, Path], site: Path) -> None:
    results, config_path = fixture_results
    config = load_config(config_path, check_files=False)
    loaded = load_results(results, config)
    board = next(b for b in loaded.boards if b.track == "text-en-es")
    track = config.track("text-en-es")
    scores = {r["submission"]: r["scores"] for r in _summary(results)["runs"]
              if r["scores"] and r["track"] == "text-en-es"}
    for reg_cfg, reg in zip(track.regimes, board.regimes, strict=False):
        expect = {s for s, sc in scores.items() if sc["LAAL"]["score"] <= reg_cfg.max_latency}
        assert {r.submission for r in reg.runs} == expect
        order = [(r.status != "ok" or r.partial, -scores[r.submission]["BLEU"]["score"]) for r in reg.runs]
        assert order == sorted(order)  # complete runs first, then by BLEU
    above = board.regimes[-1]
    assert above.max_latency is None and {r.submission for r in above.runs} == {
        s for s, sc in scores.items() if sc["LAAL"]["score"] > track.regimes[-1].max_latency}
    # the HTML tables list the runs in that order
    html = (site / "index.html").read_text(encoding="utf-8")
    section = html[html.index('id="text-en-es-test"'): html.index('id="speech-en-es-test"')]
    tables = re.findall(r'<table class="ranking sortable[^"]*">(.*?)</table>', section, re.S)
    assert len(tables) == len(board.regimes)
    for table, reg in zip(tables, board.regimes, strict=True):
        links = re.findall(r'<a href="runs/([^/]+)/index.html" class="team">', table)
        assert links == [r.slug for r in reg.runs]
    assert "build error" in section and "COPY failed" in section  # the failed run, with its reason
    # nested bounds (no min_latency): the board says so, with its regimes
    assert ("A submission competes in every regime whose bound its LAAL stays under (low: LAAL ≤ 3; high: LAAL ≤ 6)."
            in " ".join(section.split()))


def test_downloads_per_track_match_the_scores(site: Path, fixture_results: tuple[Path, Path]) -> None:
    results, _ = fixture_results
    runs = _summary(results)["runs"]
    for track in ("text-en-es", "speech-en-es"):
        data = json.loads((site / "downloads" / track / "summary.json").read_text(encoding="utf-8"))
        assert [r["submission"] for r in data["runs"]] == [r["submission"] for r in runs if r["track"] == track]
        with (site / "downloads" / track / "summary.csv").open(encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        assert len(rows) == len(data["runs"])
        for row, run in zip(rows, data["runs"], strict=True):
            assert row["status"] == run["status"]
            if run["scores"]:
                assert float(row["BLEU"]) == run["scores"]["BLEU"]["score"]
                assert float(row["LAAL_ci95_low"]) == run["scores"]["LAAL"]["ci95"][0]
            else:
                assert row["BLEU"] == "" and row["reason"] == run["reason"]


def test_submission_page_shows_scores_signatures_significance_and_log(site: Path,
                                                                      fixture_results: tuple[Path, Path]) -> None:
    results, _ = fixture_results
    from harness.scoring.significance import paired_bootstrap

    # paired bootstrap against the best complete run, as the scoring stage computes it
    page = (site / "runs" / "flicker-retrans-test" / "index.html").read_text(encoding="utf-8")
    scores = json.loads((results / "flicker-retrans" / "test" / "scores.json").read_text(encoding="utf-8"))
    for key in ("BLEU", "BLEU@mono", "BLEU@multi", "NE", "NormBLEU"):
        assert f">{key}</abbr>" in page
    assert "_CA</abbr>" not in page  # a text track: no computation-aware metrics
    assert scores["BLEU@mono"]["signature"] in page
    assert "decoded 10 instances" in page  # client.log tail
    assert "harness version" in page and "config sha256" in page
    board = load_results(results, load_config(fixture_results[1], check_files=False)).boards[0]
    assert board.best is not None and board.best.status == "ok"
    other = next(r for r in board.scored if r is not board.best and r.status == "ok")
    p = paired_bootstrap(board.best.instances(), other.instances(), "BLEU")["p_value"]
    other_page = (site / other.page).read_text(encoding="utf-8")
    assert f"<td class=\"num\">{p:.4f}</td>" in other_page
    partial = (site / "runs" / "crashy-wait4-test" / "index.html").read_text(encoding="utf-8")
    assert "Status: crash (partial output kept and scored)" in partial and "ZeroDivisionError" in partial
    assert 'class="badge b-partial"' in partial and 'class="badge b-failed"' in partial


def test_plot_has_alt_text_pareto_front_regimes_and_system_curves(site: Path,
                                                                  fixture_results: tuple[Path, Path]) -> None:
    html = (site / "index.html").read_text(encoding="utf-8")
    svg = re.search(r'<svg id="plot-text-en-es-test".*?</svg>', html, re.S)
    assert svg
    s = svg.group(0)
    assert 'role="img"' in s and "<desc" in s and "Pareto front:" in s
    assert s.count('class="regime"') == 2 and 'class="pareto-point"' in s
    systems = [(r["team"], r["system"]) for r in _summary(fixture_results[0])["runs"]
               if r["track"] == "text-en-es" and r["scores"]]
    assert s.count('class="system-curve"') == len({t for t in systems if systems.count(t) > 1}) >= 1


def test_plot_joins_latency_settings_of_one_system_only(tmp_path: Path) -> None:
    """Two systems of one team are two curves' worth of points, never one line through both."""
    def run(sub: str, system: str, laal: float, bleu: float) -> dict:
        scores = {"BLEU": {"score": bleu, "kind": "quality", "direction": "higher", "unit": "points",
                           "definition": "B"},
                  "LAAL": {"score": laal, "kind": "latency", "direction": "lower", "unit": "word",
                           "definition": "L"},
                  "info": {"latency_unit": "word", "modality": "text"}}
        return {"submission": sub, "team": "Lab", "system": system, "dataset": "test", "status": "ok", "track": "t",
                "scores": scores}

    runs = [run("lab-k2", "wait-k", 2.0, 10.0), run("lab-k4", "wait-k", 4.0, 14.0),
            run("lab-big", "big model", 3.0, 20.0), run("lab-small", "small model", 5.0, 12.0)]
    (tmp_path / "summary.json").write_text(json.dumps({"runs": runs}), encoding="utf-8")
    svg = quality_latency_svg(load_results(tmp_path).boards[0])
    assert svg is not None
    lines = re.findall(r'<polyline[^>]*class="system-curve"[^>]*>', svg)
    assert len(lines) == 1  # wait-k's two settings; "big model" and "small model" are not joined
    assert len(re.search(r'points="([^"]*)"', lines[0]).group(1).split()) == 2
    assert "drawn as curves: Lab wait-k." in svg


def test_pareto_front_is_exactly_the_non_dominated_runs(fixture_results: tuple[Path, Path]) -> None:
    results, config = fixture_results
    board = load_results(results, load_config(config, check_files=False)).boards[0]
    pts = [Point(r, r.score("LAAL"), r.score("BLEU")) for r in board.scored]
    front = pareto_front(pts, higher_is_better=True)
    for p in pts:
        dominated = any(q.x <= p.x and q.y >= p.y and (q.x, q.y) != (p.x, p.y) for q in pts)
        assert (p in front) != dominated


def test_renders_without_config_and_tolerates_a_torn_last_line(fixture_results: tuple[Path, Path],
                                                               tmp_path: Path) -> None:
    results, _ = fixture_results
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    with (copy / "lab-a-wait1" / "test" / "instances.log").open("a") as fh:
        fh.write('{"index": 99, "predic')
    index, pages = render_site(copy, tmp_path / "site", None)
    html = index.read_text(encoding="utf-8")
    assert "All submissions" in html and pages > 10
    assert not (tmp_path / "site" / "runs" / "lab-a-wait1-test" / "instances" / "99.html").exists()


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 fixture_results: tuple[Path, Path]) -> None:
    assert main(["leaderboard", str(tmp_path / "nope"), "--output", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "results directory not found" in err
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "precious.txt").write_text("keep me")
    assert main(["leaderboard", str(fixture_results[0]), "--output", str(tmp_path / "busy")]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert (tmp_path / "busy" / "precious.txt").read_text() == "keep me"
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "summary.json").write_text("{broken")
    assert main(["leaderboard", str(bad), "--output", str(tmp_path / "s2")]) == 2
    assert "summary.json: line 1" in capsys.readouterr().err


def test_pages_show_the_per_instance_metrics_the_scoring_stage_wrote(site: Path,
                                                                      fixture_results: tuple[Path, Path]) -> None:
    results, _ = fixture_results
    scores_file = results / "lab-a-wait3" / "test" / "instance_scores.jsonl"
    rows = [json.loads(x) for x in scores_file.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 10 and all(r["LAAL"] is not None and "LAAL_CA" not in r for r in rows)  # text: no CA
    run_page = (site / "runs" / "lab-a-wait3-test" / "index.html").read_text(encoding="utf-8")
    for row in rows:
        inst = (site / "runs" / "lab-a-wait3-test" / "instances" / f"{row['index']}.html").read_text(encoding="utf-8")
        grid = re.search(r"<dt>LAAL <span[^>]*>↓</span></dt><dd>([^<]+)</dd>", inst)
        assert grid and grid.group(1) == f"{row['LAAL']:.2f}"
        assert f'data-value="{row["LAAL"]}"' in run_page
    sig = json.loads((results / "significance" / "text-en-es" / "test.json").read_text(encoding="utf-8"))
    assert sig["metrics"] == ["BLEU", "LAAL"] and sig["best"] not in sig["runs"]
    scored = [r["submission"] for r in _summary(results)["runs"] if r["track"] == "text-en-es" and r["scores"]]
    assert sorted(sig["runs"]) == sorted(s for s in scored if s != sig["best"])  # not broken-build: no scores


def test_fixture_records_follow_the_instances_log_format(fixture_results: tuple[Path, Path]) -> None:
    results, _ = fixture_results
    logs = sorted(results.glob("*/test/instances.log"))
    assert len(logs) == len(TEXT_RUNS) + len(HARNESS_RUNS) + 1 + len(SPEECH_RUNS)
    for log in logs:
        for n, line in enumerate(log.read_text(encoding="utf-8").splitlines(), 1):
            assert validate_record(json.loads(line), f"{log}:{n}") is None
    retrans = [json.loads(x) for x in (results / "flicker-retrans/test/instances.log").read_text().splitlines()]
    assert any(len(r["revisions"]) > 1 for r in retrans)


def test_failed_run_page_opens_with_its_reason_and_has_no_empty_sections(site: Path) -> None:
    page = (site / "runs" / "broken-build-test" / "index.html").read_text(encoding="utf-8")
    main_html = page.split("<main", 1)[1]
    first_section = main_html[main_html.index("<section"):main_html.index("</section>")]
    assert 'class="failure-reason"' in first_section
    assert "Dockerfile line 3: COPY failed: file not found: model.bin" in first_section
    assert "build error:" in first_section
    assert "Significance" not in page and ">Scores<" not in page  # no empty sections
    assert "No client.log" not in page and "No manifest" not in page


def test_manifest_is_collapsed_and_signatures_are_neutral_metadata(site: Path) -> None:
    page = (site / "runs" / "lab-a-wait3-test" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<details class="manifest"><summary><h2>Manifest', page)
    assert '<code class="signature">nrefs:1|' in page and 'class="sig"' not in page.split("Significance")[0]
    css = (site / "static" / "style.css").read_text(encoding="utf-8")
    rule = re.search(r"code\.signature \{([^}]*)\}", css)
    assert rule and "var(--bad)" not in rule.group(1) and "700" not in rule.group(1)


def test_a_degenerate_policy_gets_a_warning_badge_and_a_diagnostics_row(tmp_path: Path) -> None:
    """The scoring stage's DegeneratePolicy flag shows as a badge on the board and the run's page; a run without
    the flag gets none."""
    from harness.metric_registry import describe_key

    def run(sub: str, flag: float, dsptv: float) -> dict:
        scores = {"BLEU": {"score": 20.0, **describe_key("BLEU")},
                  "YAAL": {"score": 2.0, **describe_key("YAAL", "word")},
                  "DSPTV": {"score": dsptv, **describe_key("DSPTV")},
                  "DegeneratePolicy": {"score": flag, **describe_key("DegeneratePolicy")},
                  "info": {"latency_unit": "word", "modality": "text"}}
        return {"submission": sub, "team": sub, "system": "s", "dataset": "test", "status": "ok", "track": "t",
                "scores": scores}

    summary = {"config_sha256": None, "runs": [run("gamer", 1.0, 47.5), run("honest", 0.0, -1.7)]}
    (tmp_path / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    index, _ = render_site(tmp_path, tmp_path / "site", None)
    board = index.read_text(encoding="utf-8")
    assert board.count('class="badge b-degenerate"') == 1
    runs = tmp_path / "site" / "runs"
    page = (runs / "gamer-test" / "index.html").read_text(encoding="utf-8")
    assert 'class="badge b-degenerate"' in page and "47.5" in page
    assert "b-degenerate" not in (runs / "honest-test" / "index.html").read_text(encoding="utf-8")


def test_a_speech_timeline_covers_words_written_at_the_end_and_computation_aware_times_beyond_it() -> None:
    """The case of issue 32: a 2.83 s recording, twelve words all written at its end, computation-aware times up to
    3957 ms. The slider reaches them, every dot lies inside the frame, the dashed line ends at 3957 ms."""
    from leaderboard import views
    from leaderboard.plots import timeline_svg

    words = "uno dos tres cuatro cinco seis siete ocho nueve diez once doce".split()
    elapsed = [2834.6 + (3957.0 - 2834.6) * (i + 1) / len(words) for i in range(len(words))]
    record = {"index": 0, "source": ["talk.wav"], "source_length": 2834.6, "prediction": " ".join(words),
              "delays": [2834.6] * len(words), "elapsed": elapsed, "latency_unit": "ms", "status": "ok"}
    view = views.timeline(record, "ms", True)
    assert view["slider_max"] >= 2834.6 and views.slider_data(view)["sliderMax"] == view["slider_max"]
    svg = timeline_svg(view)
    frame = re.search(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="none"[^>]*'
                      r'class="frame"', svg)
    assert frame
    x0, y0, w, h = map(float, frame.groups())
    found = re.findall(r'<circle cx="([-\d.]+)" cy="([-\d.]+)"[^>]*class="write"', svg)
    dots = [(float(x), float(y)) for x, y in found]
    assert len(dots) == len(words)
    assert all(x0 <= x <= x0 + w and y0 <= y <= y0 + h for x, y in dots), dots
    data = dict(re.findall(r'data-(x0|x1|max)="([\d.]+)"', svg))
    last_ca = float(data["x0"]) + (float(data["x1"]) - float(data["x0"])) * 3957.0 / float(data["max"])
    path = re.search(r'<path d="([^"]+)"[^>]*class="elapsed"', svg)
    assert path and float(data["max"]) >= 3957.0
    assert max(float(v) for v in re.findall(r"H([\d.]+)", path.group(1))) == pytest.approx(last_ca, abs=0.01)
    assert last_ca <= x0 + w


def _board_signatures(site: Path, board: str) -> list[str]:
    """The metric names of a board's sacrebleu signature list on the index."""
    html = (site / "index.html").read_text(encoding="utf-8")
    section = html[html.index(f'id="{board}"'):]
    section = section[:section.index("</section>")]
    listed = re.search(r'<details class="signatures".*?</details>', section, re.S)
    return re.findall(r"<dt>([^<]+)</dt>", listed.group(0)) if listed else []


def test_a_board_lists_the_signatures_of_its_tracks_metrics_only(site: Path) -> None:
    """The speech track's metrics are BLEU and chrF: its runs' scores.json also hold TER, which it does not show;
    the text track's metrics include TER."""
    speech = _board_signatures(site, "speech-en-es-test")
    assert speech and {name.partition("@")[0] for name in speech} == {"BLEU", "chrF"}, speech
    text = _board_signatures(site, "text-en-es-test")
    assert {"BLEU", "chrF", "TER", "BLEU@mono"} <= set(text), text
