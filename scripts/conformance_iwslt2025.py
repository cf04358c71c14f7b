#!/usr/bin/env python3
"""Conformance with the published IWSLT 2025 numbers: every run of a checkout of the public baselines repository
(`pe-trik/iwslt25-baselines`) scored through `harness score` under the matching profile, each value compared with
the `scores.resegmented.tsv` that the 2025 organizers' tool (FBK `stream_laal.py`) wrote beside the run's log.

    python3 scripts/conformance_iwslt2025.py PATH/TO/iwslt25-baselines [--tolerance 1e-9] [--only SUBSTRING]

For each `scores.resegmented.tsv`: its first line names the tool version (`StreamLAAL v2.0.` -> profile
`iwslt2025`, `StreamLAAL v1.0.0.` -> `iwslt2025-v1`), its last line holds BLEU, StreamLAAL and StreamLAAL_CA; the
nearest `eval_args.json` (the organizers' shared subset) or `eval.sh` (a full checkout) above it gives the reference,
segmentation, sacrebleu tokenizer and latency unit the organizers passed. A run whose data the checkout lacks (MCIF's
references are not in the repository) is listed as not comparable. Prints one row per run and a summary; exits 1 on
any value that differs by more than the tolerance.

Needs the original mwerSegmenter binary (`pip install 'harness[mwerbinary]'` or HARNESS_MWERSEGMENTER). The
checkout is public data that this repository does not ship.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

CLONE = Path(__file__).resolve().parent.parent


def _in_the_clones_environment() -> None:
    """Go on under the clone's virtual environment (scripts/setup.sh makes it) when another Python started this
    script: from a clean shell, `python3` is the system's, which lacks the harness's dependencies."""
    venv = Path(os.environ.get("HARNESS_VENV") or CLONE / ".venv")
    python = venv / "bin" / "python3"
    if python.is_file() and Path(sys.prefix).resolve() != venv.resolve():
        os.execv(python, [str(python), *sys.argv])


_in_the_clones_environment()
sys.path.insert(0, str(CLONE))

from harness.cli import main as harness_main  # noqa: E402
from harness.errors import HarnessError  # noqa: E402
from harness.interop import STREAM_LAAL_COLUMNS as COLUMNS  # noqa: E402
from harness.interop import read_stream_laal_tsv  # noqa: E402
from harness.profiles import STREAM_LAAL_VERSIONS as PROFILE_OF_VERSION  # noqa: E402

#: the options of the official tool that name files (relative to the checkout in `eval_args.json`)
PATH_ARGUMENTS = ("reference", "audio-yaml")


@dataclass
class Run:
    """One published run: its log, its published values and the organizers' arguments."""

    tsv: Path
    log: Path
    version: str
    published: dict[str, float] | None
    args: dict[str, str]


def _eval_args(tsv: Path, root: Path) -> dict[str, str]:
    """The arguments the organizers passed to their tool for the run of `tsv`: from the nearest `eval_args.json`
    above it (the shared subset: the arguments as JSON, paths relative to `root`) or `eval.sh` (a full checkout of
    the public repository: its command line, `${REPO_ROOT_PATH}` standing for `root`)."""
    for folder in tsv.parents:
        given = folder / "eval_args.json"
        if given.is_file():
            return _json_args(given, root)
        script = folder / "eval.sh"
        if script.is_file():
            text = script.read_text(encoding="utf-8").replace("${REPO_ROOT_PATH}", str(root))
            return dict(re.findall(r"--(reference|audio-yaml|sacrebleu-tokenizer|latency-unit)\s+(\S+)", text))
        if folder == root:
            break
    raise SystemExit(f"{tsv}: no eval_args.json or eval.sh above it")


def _json_args(path: Path, root: Path) -> dict[str, str]:
    """`eval_args.json`'s "arguments" (file paths made absolute under `root`); one line naming the file if bad."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: not readable JSON ({exc})") from None
    given = data.get("arguments") if isinstance(data, dict) else None
    if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
        raise SystemExit(f'{path}: needs an object whose "arguments" map each option to a string')
    return {key: str(root / value) if key in PATH_ARGUMENTS else value for key, value in given.items()}


def _published(tsv: Path) -> tuple[str, dict[str, float] | None]:
    """(tool version, published values); None where the tool stopped before printing them (its assertion that the
    log and the segmentation name the same recordings: the truncated logs)."""
    try:
        return read_stream_laal_tsv(tsv)
    except HarnessError as exc:
        raise SystemExit(str(exc)) from None


def find_runs(root: Path, only: str | None) -> list[Run]:
    """Every published run under `root` (sorted by path)."""
    runs = []
    for tsv in sorted(root.glob("experiments/**/scores.resegmented.tsv")):
        if only and only not in str(tsv):
            continue
        version, published = _published(tsv)
        runs.append(Run(tsv, tsv.parent / "instances.log", version, published, _eval_args(tsv, root)))
    return runs


def _target_lang(reference: str) -> str:
    """The target language of a reference file: its folder's name (`de`) or the part after `_` (`cs_en` -> en)."""
    return Path(reference).parent.name.split("_")[-1]


def score(run: Run) -> dict[str, float | None]:
    """The run's three values through `harness score` under the profile of its tool version."""
    a = run.args
    argv = ["score", str(run.log), "--segmentation", a["audio-yaml"], "--references", a["reference"],
            "--target-lang", _target_lang(a["reference"]), "--latency-unit", a.get("latency-unit", "word"),
            "--tokenizer", a.get("sacrebleu-tokenizer", "13a"), "--profile", PROFILE_OF_VERSION[run.version],
            "--metrics", "BLEU,StreamLAAL", "--format", "json", "--no-write", "--bootstrap", "1"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = harness_main(argv)
    if rc != 0:
        raise RuntimeError(err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else f"exit {rc}")
    scores = json.loads(out.getvalue())
    return {name: (scores.get(name) or {}).get("score") for name in COLUMNS}


def _missing(run: Run) -> str | None:
    if run.published is None:
        return "the 2025 tool printed no values (it stopped on a log that lacks recordings)"
    for key in ("reference", "audio-yaml"):
        if not Path(run.args.get(key, "")).is_file():
            return f"{key} {run.args.get(key)} is not in the checkout"
    return None if run.log.is_file() else "no instances.log"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="a checkout of pe-trik/iwslt25-baselines")
    parser.add_argument("--tolerance", type=float, default=1e-9, help="largest absolute difference accepted (1e-9)")
    parser.add_argument("--only", default=None, help="only runs whose path contains this")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    runs = find_runs(root, args.only)
    if not runs:
        print(f"{root}: no scores.resegmented.tsv under experiments/", file=sys.stderr)
        return 2
    equal = differ = skipped = 0
    worst = dict.fromkeys(COLUMNS, 0.0)
    print(f"{'run':<100} {'tool':>6} {'BLEU':>9} {'StreamLAAL':>11} {'SL_CA':>10}  result")
    for run in runs:
        name = str(run.tsv.parent.relative_to(root / "experiments"))
        why = _missing(run)
        if why is None:
            try:
                ours = score(run)
            except (RuntimeError, SystemExit) as exc:
                why = f"harness score failed: {exc}"
        if why is not None:
            skipped += 1
            print(f"{name:<100} {run.version:>6} {'':>9} {'':>11} {'':>10}  not comparable: {why}")
            continue
        assert run.published is not None
        diffs = {k: abs(ours[k] - v) if ours[k] is not None else float("inf") for k, v in run.published.items()}
        for k, d in diffs.items():
            worst[k] = max(worst[k], d)
        ok = all(d <= args.tolerance for d in diffs.values())
        equal += ok
        differ += not ok
        cells = " ".join(f"{run.published[k]:>{w}.3f}" for k, w in zip(COLUMNS, (9, 11, 10), strict=True))
        detail = "equal" if ok else "DIFFERS " + ", ".join(
            f"{k} ours {ours[k]!r} published {run.published[k]!r}" for k in COLUMNS if diffs[k] > args.tolerance)
        print(f"{name:<100} {run.version:>6} {cells}  {detail}")
    print(f"\n{len(runs)} runs: {equal} equal to {args.tolerance:g} in every value, {differ} differ, {skipped} not "
          "comparable")
    print("largest difference: " + ", ".join(f"{k} {v:.3g}" for k, v in worst.items()))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
