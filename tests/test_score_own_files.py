"""`harness score` never replaces what another log's scoring wrote (issue 32, item 2): several logs of one folder,
in one command or in several, each get their own scores named after the log; a run folder's instances.log and a
log scored alone keep today's scores.json. And a short-form METEOR scored with no known target language says so
(item 6), as the long-form path does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.harness_cli import run_in_checkout as harness

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "runs" / "udhr-dev-waitk3"


def _logs(folder: Path) -> tuple[Path, Path]:
    """Two SimulEval logs of the example run in one folder: A as it is, B with every delay two words later."""
    folder.mkdir(parents=True)
    a, b = folder / "A.jsonl", folder / "B.jsonl"
    shutil.copy(EXAMPLE / "instances.log", a)
    lines = []
    for line in a.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        rec["delays"] = [min(d + 2, rec["source_length"]) for d in rec["delays"]]
        lines.append(json.dumps(rec, ensure_ascii=False))
    b.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return a, b


def _laal(path: Path) -> float:
    return json.loads(path.read_text(encoding="utf-8"))["LAAL"]["score"]


def test_two_logs_of_one_folder_in_one_command_each_get_their_own_files(tmp_path: Path) -> None:
    a, b = _logs(tmp_path / "logs")
    done = harness("score", str(a), str(b), "--bootstrap", "20")
    assert done.returncode == 0, done.stderr
    folder = a.parent
    assert f"wrote {folder / 'A.scores.json'}" in done.stdout and f"wrote {folder / 'B.scores.json'}" in done.stdout
    assert not (folder / "scores.json").exists() and not (folder / "instance_scores.jsonl").exists()
    assert _laal(folder / "A.scores.json") < _laal(folder / "B.scores.json")
    rows = (folder / "B.instance_scores.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 40 and (folder / "A.instance_scores.jsonl").read_text() != "\n".join(rows) + "\n"


def test_a_second_command_in_the_folder_keeps_the_first_ones_scores(tmp_path: Path) -> None:
    a, b = _logs(tmp_path / "logs")
    folder = a.parent
    first = harness("score", str(a), "--bootstrap", "20")
    assert first.returncode == 0, first.stderr
    assert first.stdout.rstrip().endswith(f"wrote {folder / 'scores.json'}")  # alone: today's files
    kept = (folder / "scores.json").read_bytes(), (folder / "instance_scores.jsonl").read_bytes()
    second = harness("score", str(b), "--bootstrap", "20")
    assert second.returncode == 0, second.stderr
    assert second.stdout.rstrip().endswith(f"wrote {folder / 'B.scores.json'}")
    assert ((folder / "scores.json").read_bytes(), (folder / "instance_scores.jsonl").read_bytes()) == kept
    assert _laal(folder / "B.scores.json") > _laal(folder / "scores.json")
    again = harness("score", str(a), "--bootstrap", "20")  # A's own scores, written again in place
    assert again.stdout.rstrip().endswith(f"wrote {folder / 'scores.json'}")
    assert (folder / "scores.json").read_bytes() == kept[0]


def test_a_foreign_log_in_a_run_folder_leaves_the_runs_scores(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    mine = harness("score", str(run), "--bootstrap", "20")
    assert mine.stdout.rstrip().endswith(f"wrote {run / 'scores.json'}")
    kept = (run / "scores.json").read_bytes()
    _, b = _logs(tmp_path / "other")
    shutil.copy(b, run / "B.jsonl")
    other = harness("score", str(run / "B.jsonl"), "--bootstrap", "20")
    assert other.returncode == 0, other.stderr
    assert other.stdout.rstrip().endswith(f"wrote {run / 'B.scores.json'}")
    assert (run / "scores.json").read_bytes() == kept


def test_meteor_without_a_target_language_warns(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    unknown = harness("score", str(run), "--metrics", "METEOR", "--bootstrap", "20", "--no-write")
    assert unknown.returncode == 0, unknown.stderr
    assert (f"warning: {run}: no target language known: METEOR used its English stemmer and synonyms; pass "
            "--target-lang") in unknown.stderr
    known = harness("score", str(run), "--metrics", "METEOR", "--bootstrap", "20", "--no-write",
                    "--target-lang", "es")
    assert known.returncode == 0 and "warning" not in known.stderr, known.stderr
    plain = harness("score", str(run), "--bootstrap", "20", "--no-write")  # no METEOR: nothing to warn about
    assert "warning" not in plain.stderr, plain.stderr
