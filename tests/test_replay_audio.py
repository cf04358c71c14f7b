"""Which audio a site publishes for its replays (`harness leaderboard --with-audio dev|all`), and what the replay
shows, on real long-form runs of the bundled dev talk (7 minutes) and test talk (22 minutes).

Without the option the site holds no audio at all; `dev` (also the option given bare) publishes the development
talk and never the hidden test talk; `all` publishes both. Each page's player points at the published copy of its
own recording. A recording whose audio cannot be published gets a silent replay and one warning line."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from leaderboard.audio import SiteAudio, is_dev_dataset
from leaderboard.replay import replay_data
from tests import replay_support as rs

pytestmark = [pytest.mark.espeak, pytest.mark.slow]  # the bundled talks are the espeak-ng reading of the UDHR

DEV_TALK = rs.DATA / "talks" / "udhr-talk.wav"
TEST_TALK = rs.DATA / "talks" / "udhr-long.wav"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("audio")
    out = {"dev": rs.harness_run(root / "oracle-dev", "dev", rs.ORACLE),
           "test": rs.harness_run(root / "oracle-test", "test", rs.ORACLE),
           "revising": rs.harness_run(root / "revising", "dev", rs.revising_agent(root))}
    out["results"] = rs.results_of(root, [("oracle", "dev", out["dev"]), ("oracle", "test", out["test"]),
                                          ("retrans", "dev", out["revising"])])
    return out


def _site(runs: dict[str, Path], tmp_path: Path, *extra: str) -> Path:
    site = tmp_path / "site"
    assert main(["leaderboard", str(runs["results"]), "--config", str(rs.CONFIG), "--output", str(site),
                 *extra]) == 0
    return site


def _digests(site: Path) -> set[str]:
    return {hashlib.sha256(p.read_bytes()).hexdigest() for p in site.rglob("*") if p.is_file()}


def _player(page: Path) -> Path | None:
    """The file the page's player plays (its <audio src>, resolved against the page), or None: no player."""
    html = page.read_text(encoding="utf-8")
    found = re.findall(r'<audio id="replay-audio"[^>]* src="([^"]+)"', html)
    data = json.loads(re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S)[1])
    assert data["audio"] == (found[0] if found else None)
    return (page.parent / found[0]).resolve() if found else None


def _page(site: Path, run: str) -> Path:
    return site / "runs" / run / "instances" / "0.html"


def test_without_the_option_the_site_holds_no_audio(runs, tmp_path: Path) -> None:
    site = _site(runs, tmp_path)
    assert not (site / "audio").exists()
    assert not _digests(site) & {rs.sha256(DEV_TALK), rs.sha256(TEST_TALK)}
    for run in ("oracle-dev", "oracle-test", "retrans-dev"):
        assert _player(_page(site, run)) is None  # the replay is there, silent
        assert 'id="replay-data"' in _page(site, run).read_text(encoding="utf-8")
    assert all("<audio" not in p.read_text(encoding="utf-8") for p in site.rglob("*.html"))


@pytest.mark.parametrize("option", [["--with-audio", "dev"], ["--with-audio"]])
def test_dev_publishes_the_development_talk_and_never_the_test_talk(runs, tmp_path: Path, option: list[str],
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    site = _site(runs, tmp_path, *option)
    assert "1 audio file(s) of the development dataset(s)" in capsys.readouterr().out
    assert [rs.sha256(p) for p in (site / "audio").iterdir()] == [rs.sha256(DEV_TALK)]
    assert rs.sha256(TEST_TALK) not in _digests(site)
    for run in ("oracle-dev", "retrans-dev"):  # one copy, played by both dev pages
        player = _player(_page(site, run))
        assert player is not None and player.is_relative_to(site.resolve()) and rs.sha256(player) == rs.sha256(DEV_TALK)
    assert _player(_page(site, "oracle-test")) is None
    assert "<audio" not in _page(site, "oracle-test").read_text(encoding="utf-8")


def test_all_publishes_every_talk_to_its_own_page(runs, tmp_path: Path) -> None:
    site = _site(runs, tmp_path, "--with-audio", "all")
    assert sorted(rs.sha256(p) for p in (site / "audio").iterdir()) == sorted([rs.sha256(DEV_TALK),
                                                                                rs.sha256(TEST_TALK)])
    for run, talk in (("oracle-dev", DEV_TALK), ("oracle-test", TEST_TALK), ("retrans-dev", DEV_TALK)):
        player = _player(_page(site, run))
        assert player is not None and rs.sha256(player) == rs.sha256(talk)
        assert talk.name not in player.name  # the site's file names do not repeat the organizer's


def test_an_audio_option_outside_dev_or_all_is_refused(runs, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["leaderboard", str(runs["results"]), "--output", str(tmp_path / "site"), "--with-audio", "test"])
    assert "invalid choice: 'test'" in capsys.readouterr().err


def test_development_datasets_are_told_by_name() -> None:
    assert all(is_dev_dataset(n) for n in ("dev", "DEV", "dev2", "dev-acl", "dev_2025", "development", "dev.v2"))
    assert not any(is_dev_dataset(n) for n in ("test", "devtest", "dev-test", "test-dev", "blind", "librivox",
                                               "tst-COMMON", "mydev"))


def test_audio_that_cannot_be_published_gives_a_silent_replay_and_one_warning(runs, tmp_path: Path) -> None:
    rec = rs.records(runs["dev"])[0]
    raw = tmp_path / "talk.pcm"
    raw.write_bytes(DEV_TALK.read_bytes()[44:])
    lines: list[str] = []
    audio = SiteAudio("all", warn=lines.append)
    audio.site = tmp_path / "site"
    assert audio.href({**rec, "source": [str(tmp_path / "gone.wav")]}, "dev") is None
    assert audio.href({**rec, "source": [str(raw)]}, "dev") is None
    assert audio.href({**rec, "source": [str(raw)]}, "dev") is None  # asked again: no second warning
    assert audio.href({**rec, "source": "a text source"}, "dev") is None  # not speech: nothing to say
    assert len(lines) == 2 and "gone.wav: cannot copy the audio into the site" in lines[0]
    assert lines[1].startswith(f"{raw}: not a format browsers play") and audio.files == 0
    assert audio.href(rec, "dev") is not None and audio.files == 1


def test_a_re_translation_replays_into_its_final_hypothesis_at_its_final_delays(runs) -> None:
    """The spans never erased are the final hypothesis, each shown at the delay (elapsed time) the scorer gives
    its word (`final_token_delays`); each draft's wrong word is erased by the revision after it."""
    rec = rs.records(runs["revising"])[0]
    data = replay_data(rec, None)
    words = rec["prediction"].split()
    for lane, times in zip(data["lanes"], (rec["delays"], rec["elapsed"]), strict=True):
        kept = [(s[0], s[1]) for s in lane["spans"] if s[2] is None]
        assert [w for w, _ in kept] == words
        assert [t for _, t in kept] == pytest.approx(times, abs=1e-3)
        erased = [s for s in lane["spans"] if s[2] is not None]
        assert {s[0] for s in erased} == {rs.DRAFT} and len(erased) == len(rec["revisions"]) // 2
        assert all(s[2] > s[1] for s in erased)
    ends = [rec["source_length"]] + [r[k] for r in rec["revisions"] for k in ("delay", "elapsed")]
    assert data["endMs"] == max(ends) and data["revised"]


def test_an_incremental_run_replays_each_word_at_its_delay_and_elapsed_time(runs) -> None:
    rec = rs.records(runs["dev"])[0]
    data = replay_data(rec, "../../../audio/x.wav")
    nca, ca = data["lanes"]
    assert [s[0] for s in nca["spans"]] == rec["prediction"].split() == [s[0] for s in ca["spans"]]
    assert [s[1] for s in nca["spans"]] == rec["delays"] and [s[1] for s in ca["spans"]] == rec["elapsed"]
    assert not any(s[2] for s in nca["spans"] + ca["spans"]) and not data["revised"]
    assert data["lengthMs"] == rec["source_length"] and data["audio"] == "../../../audio/x.wav"
    missing = replay_data({**rec, "elapsed": []}, None)["lanes"][1]
    assert missing["missing"] and missing["spans"] == []
