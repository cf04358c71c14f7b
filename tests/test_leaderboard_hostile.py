"""Hostile strings in a results folder (issue 13, item 7): the site stays small, boards follow the task config,
downloads carry no spreadsheet formula. The results folder is written by the harness's own writers."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness import layout
from harness.config import load_config
from leaderboard.render import render_site
from tests.leaderboard_fixture import finish_results, summary_record, write_run

HUGE_TEAM = "T" * 5_000_000
BOGUS_TRACK = "<b>bogus</b>-track"
FORMULA_ID = '=HYPERLINK("evil.example","click")'
CONTROL_TEAM = "Evil\x1b]0;owned\x07Team"
CONTROL_LOG = "\x1b[31mred\x07\nline two\x1b[2K\n"
#: Control characters (C0 but the line break, DEL, C1) and bidirectional overrides: none may reach a page raw.
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
LONG_WORDS = 12_000  # a hypothesis of ~80,000 characters: far more than a page shows
SOURCES = ["the cat sat on the mat", "a dog ran in the park today", "birds sing in the morning"]
REFS = ["el gato se sentó en la alfombra", "un perro corrió en el parque hoy", "los pájaros cantan por la mañana"]
CONFIG = """\
task: hostile
tracks:
  - name: text-en-es
    modality: text
    source_lang: en
    target_lang: es
    primary: {{quality: BLEU, latency: LAAL}}
    datasets:
      test: {{source: {src}, references: {{orig: {ref}}}}}
"""


def _records(k: int, long_first: bool = False) -> list[dict[str, Any]]:
    out = []
    for i, (src, ref) in enumerate(zip(SOURCES, REFS, strict=True)):
        n = len(src.split())
        words = [f"palabra{j}" for j in range(LONG_WORDS)] if long_first and i == 0 else ref.split()
        last = n - 1 if k == 1 else n  # wait-1 writes its last word before the last source word: EndOffset < 0
        delays = [float(min(last, j + k)) for j in range(len(words))]
        out.append({"index": i, "source": src, "source_length": n, "reference": ref, "references": {"orig": ref},
                    "prediction": " ".join(words), "delays": delays, "elapsed": [d + 1.0 for d in delays],
                    "prediction_length": len(words), "status": "ok", "error": None, "latency_unit": "word"})
    return out


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("hostile")
    (root / "src.en").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    (root / "ref.es").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    config = root / "task.yaml"
    config.write_text(CONFIG.format(src=root / "src.en", ref=root / "ref.es"), encoding="utf-8")
    results = root / "results"
    manifest = {"harness_version": "test"}
    text_track = load_config(config, check_files=False).track("text-en-es")
    runs = []
    for sub, team, track, k, long_first in (("honest-wait1", "Honest", "text-en-es", 1, False),
                                            ("huge-team", HUGE_TEAM, "text-en-es", 2, False),
                                            ("bogus-track", "Bogus", BOGUS_TRACK, 3, False),
                                            (FORMULA_ID, "Formula", "text-en-es", 3, False),
                                            ("spew", "Spew", "text-en-es", 1, True)):
        scores = write_run(results, sub, "test", _records(k, long_first), "client log\n", manifest,
                           text_track, bootstrap=20)
        runs.append(summary_record(sub, team, "sys", track, "primary", False, "ok", scores))
    recs = _records(1)
    recs[0]["prediction"] = "\x1b[5mblink\x07 " + recs[0]["prediction"]
    scores = write_run(results, "control-chars", "test", recs, CONTROL_LOG, manifest, text_track, bootstrap=20)
    runs.append(summary_record("control-chars", CONTROL_TEAM, "sys\x1b[2J\x9b31m", "text-en-es", "primary", False,
                               "ok", scores))
    write_run(results, "control-crash", "test", [], CONTROL_LOG, manifest, text_track)
    runs.append(summary_record("control-crash", "Crash\x07", "sys", "text-en-es", "primary", False, "crash", None,
                               reason="exit code 1 after 0/3 instances: \x1b[31mred\x1b[0m \u202eevil"))
    finish_results(results, config, runs)
    site = root / "site"
    render_site(results, site, load_config(config, check_files=False))
    return results, site


@pytest.mark.slow
def test_a_huge_team_name_is_capped_in_pages_and_downloads(hostile_site: tuple[Path, Path]) -> None:
    results, site = hostile_site
    assert HUGE_TEAM in layout.ResultsDir(results).summary.read_text(encoding="utf-8")  # the input really has it
    index = (site / "index.html").read_text(encoding="utf-8")
    assert len(index) < 500_000
    assert "T" * 199 + "…" in index and "T" * 201 not in index
    for path in (site / "downloads").rglob("summary.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        for run in data["runs"]:
            assert all(len(v) <= 200 for v in run.values() if isinstance(v, str)), path
    page = next(site.glob("runs/huge-team*/index.html")).read_text(encoding="utf-8")
    assert len(page) < 500_000 and "T" * 201 not in page


def test_only_configured_tracks_get_boards(hostile_site: tuple[Path, Path]) -> None:
    _, site = hostile_site
    index = (site / "index.html").read_text(encoding="utf-8")
    nav = index[index.index("<nav"): index.index("</nav>")]
    assert "bogus" not in nav and "text-en-es" in nav
    assert not any("bogus" in p.name for p in (site / "downloads").iterdir())
    assert 'id="invalid-runs"' in index
    invalid = index[index.index('id="invalid-runs"'):]
    invalid = invalid[: invalid.index("</section>")]
    assert "&lt;b&gt;bogus&lt;/b&gt;-track" in invalid and "<b>bogus" not in index
    for page in site.glob("runs/*/index.html"):
        nav = (text := page.read_text(encoding="utf-8"))[text.index("<nav"): text.index("</nav>")]
        assert "bogus" not in nav


def test_csv_cells_cannot_start_a_formula(hostile_site: tuple[Path, Path]) -> None:
    _, site = hostile_site
    with (site / "downloads" / "text-en-es" / "summary.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    subs = [r["submission"] for r in rows]
    assert "'" + FORMULA_ID in subs and FORMULA_ID not in subs
    for row in rows:
        for key in ("submission", "team", "system", "track", "dataset", "kind", "status", "reason"):
            assert not row[key].startswith(("=", "+", "-", "@", "\t", "\r")), (key, row[key])
    assert any(float(r["EndOffset"]) < 0 for r in rows)  # numbers stay numbers, a minus sign included


def test_an_instance_page_shows_a_bounded_part_of_a_long_hypothesis(hostile_site: tuple[Path, Path]) -> None:
    results, site = hostile_site
    log = layout.ResultsDir(results).run("spew", "test").instances_log
    assert log.stat().st_size > 150_000
    page = (site / "runs" / "spew-test" / "instances" / "0.html").read_text(encoding="utf-8")
    assert "more characters are in the run" in page
    assert page.count("palabra11999") == 0 and len(page) < log.stat().st_size


def test_control_characters_reach_no_page_raw(hostile_site: tuple[Path, Path]) -> None:
    """ESC, BEL, CSI and a bidirectional override in a team, a system, a reason, a client log and a hypothesis
    (issue 27): HTML escaping leaves them in the file, where a terminal that prints it obeys them; the pages and
    the CSV write them as escapes, as the terminal output does."""
    results, site = hostile_site
    summary = json.loads(layout.ResultsDir(results).summary.read_text(encoding="utf-8"))
    assert CONTROL_TEAM in [r["team"] for r in summary["runs"]]  # the input really has it
    pages = [*site.rglob("*.html"), *site.rglob("*.csv")]
    assert len(pages) > 10
    for page in pages:
        text = page.read_text(encoding="utf-8")
        found = RAW_CONTROL.search(text)
        assert found is None, f"{page.relative_to(site)}: {found.group()!r} at {found.start()}"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "Evil\\x1b]0;owned\\x07Team" in index and "\\x1b[31mred\\x1b[0m \\u202eevil" in index
    page = (site / "runs" / "control-chars-test" / "index.html").read_text(encoding="utf-8")
    assert "\\x1b[31mred\\x07\nline two\\x1b[2K" in page  # the log's line breaks stay
    assert "\\x1b[5mblink\\x07" in (site / "runs" / "control-chars-test" / "instances" / "0.html").read_text()
