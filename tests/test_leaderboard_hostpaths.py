"""A published site names no absolute path of the organizer's machine: not the results folder, not the task's
data (text files, the speech recordings the replay plays), in no page, download or other file of the site."""

from __future__ import annotations

import json
from pathlib import Path

from harness.cli import main
from harness.data.prepare import LIBRIVOX


def _recordings(results: Path) -> list[Path]:
    """The audio files the speech runs of `results` read (their instances.log's `source`), as the log names them."""
    found = []
    for log in sorted(results.glob("speechy-*/*/instances.log")):
        for line in log.read_text(encoding="utf-8").splitlines():
            source = json.loads(line).get("source")
            if isinstance(source, list):
                found += [Path(p) for p in source]
    return found


def test_no_file_of_the_site_names_a_host_path(fixture_results: tuple[Path, Path], tmp_path: Path) -> None:
    results, config = fixture_results
    site = tmp_path / "site"
    assert main(["leaderboard", str(results), "--config", str(config), "--output", str(site),
                 "--with-audio", "all"]) == 0
    wavs = _recordings(results)
    assert wavs, "the fixture has speech runs"
    host = {str(results), str(results.resolve()), str(config.parent), str(config.parent.resolve()), str(LIBRIVOX),
            str(tmp_path)} | {str(w.parent) for w in wavs} | {str(w.resolve().parent) for w in wavs}
    named = sorted(f"{p.relative_to(site)} names {h}" for p in site.rglob("*") if p.is_file()
                   for h in host if h.encode() in p.read_bytes())
    assert named == [], "\n".join(named[:20])


def test_the_replay_page_names_its_audio_by_its_file_name(fixture_results: tuple[Path, Path],
                                                          tmp_path: Path) -> None:
    results, config = fixture_results
    site = tmp_path / "site"
    assert main(["leaderboard", str(results), "--config", str(config), "--output", str(site)]) == 0
    wav = _recordings(results)[0]
    page = (site / "runs" / "speechy-k2-test" / "instances" / "0.html").read_text(encoding="utf-8")
    assert f"<code>{wav.name}</code>" in page
