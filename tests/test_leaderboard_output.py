"""`harness leaderboard`'s output folder: an existing non-empty folder is refused in one line that names it and
`--overwrite`; `--overwrite` renders beside it and swaps, so a failed render leaves the old site as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main


def _render(results: Path, config: Path, site: Path, *extra: str) -> int:
    """`harness leaderboard RESULTS --config CONFIG --output SITE EXTRA...`, in this process."""
    return main(["leaderboard", str(results), "--config", str(config), "--output", str(site), *extra])


def _files(site: Path) -> dict[str, bytes]:
    """Every file of `site` by its path relative to `site`, with its bytes."""
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def test_an_existing_site_is_refused_without_overwrite_and_replaced_with_it(
        fixture_results: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results, config = fixture_results
    site = tmp_path / "site"
    assert _render(results, config, site) == 0
    (site / "note.txt").write_text("the organizer's own note", encoding="utf-8")
    before = _files(site)
    capsys.readouterr()
    assert _render(results, config, site) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(site) in err and "--overwrite" in err, err
    assert _files(site) == before
    assert _render(results, config, site, "--overwrite") == 0
    assert (site / "index.html").is_file() and not (site / "note.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # nothing left beside it


def test_any_non_empty_folder_is_refused_and_an_empty_one_is_used(
        fixture_results: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results, config = fixture_results
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "precious.txt").write_text("keep me", encoding="utf-8")
    assert _render(results, config, busy) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(busy) in err and "--overwrite" in err, err
    assert _files(busy) == {"precious.txt": b"keep me"}
    (tmp_path / "empty").mkdir()
    assert _render(results, config, tmp_path / "empty") == 0
    assert (tmp_path / "empty" / "index.html").is_file()


def test_a_failed_render_with_overwrite_leaves_the_old_site_as_it_was(
        fixture_results: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The new site is rendered beside the old one: a run whose instances.log cannot be read (here a folder) ends
    the render after index.html was written, and the old site is still whole, with nothing left beside it."""
    results, config = fixture_results
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    site = tmp_path / "site"
    assert _render(copy, config, site) == 0
    before = _files(site)
    log = copy / "lab-a-wait1" / "test" / "instances.log"
    log.unlink()
    log.mkdir()
    capsys.readouterr()
    assert _render(copy, config, site, "--overwrite") == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(log) in err, err
    assert _files(site) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "site"]


def test_overwrite_never_replaces_the_folder_that_holds_the_results(
        fixture_results: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results, config = fixture_results
    shutil.copytree(results, tmp_path / "results")
    assert _render(tmp_path / "results", config, tmp_path, "--overwrite") == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "holds the results folder" in err, err
    assert (tmp_path / "results" / "summary.json").is_file()


def test_datasets_leave_the_other_datasets_runs_out_of_every_file(
        fixture_results: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--datasets`: a board published while a phase is hidden names none of that phase's runs, in no page and no
    download; naming every dataset changes nothing."""
    results, config = fixture_results
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    ids = sorted({r["submission"] for r in summary["runs"]})
    assert {r["dataset"] for r in summary["runs"]} == {"test"}
    assert _render(results, config, tmp_path / "all") == 0
    assert _render(results, config, tmp_path / "same", "--datasets", "test") == 0
    assert _files(tmp_path / "same") == _files(tmp_path / "all")
    assert _render(results, config, tmp_path / "none", "--datasets", "dev") == 0
    leaked = [(name, i) for name, body in _files(tmp_path / "none").items() for i in ids if i.encode() in body]
    assert leaked == [] and any(i.encode() in b for b in _files(tmp_path / "all").values() for i in ids)
