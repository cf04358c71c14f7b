"""`harness score RUN_DIR_OR_LOG... [--format json]`: score instances.logs; write scores.json and
instance_scores.jsonl beside each.

Neural metrics (`--metrics COMET --comet-model PATH`, `--xcomet-model PATH`, `--bleurt-model PATH`, or the
`metrics:` block of a task config given with `--config`) load their checkpoint once for all the runs named, and
runs on the same dataset share COMET's source and reference embeddings."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from harness.metric_registry import MODEL_METRICS
from harness.profiles import DEFAULT_PROFILE, PROFILES
from harness.scoring.options import ScoringOptions

HELP = "score an instances.log (the harness's or SimulEval's) and write scores.json beside it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `harness score`."""
    parser.add_argument("path", metavar="RUN_DIR_OR_LOG", nargs="*",
                        help="a run directory or an instances.log (several: each is scored, models load once)")
    parser.add_argument("--format", choices=("table", "json"), default="table", help="output format (table)")
    parser.add_argument(
        "--latency-unit",
        choices=("word", "char", "ms"),
        default=None,
        help="override the log's latency unit (SimulEval logs: word for text, ms for speech; char for zh/ja)",
    )
    parser.add_argument("--tokenizer", default=None,
                        help="sacrebleu tokenizer for BLEU (13a; zh, char, ja-mecab; default: the profile's, 13a "
                             "for iwslt2026)")
    parser.add_argument("--profile", default=None, choices=tuple(PROFILES), metavar="NAME",
                        help="campaign profile: every semantic choice of that campaign's official long-form tool "
                             f"({', '.join(PROFILES)}; default {DEFAULT_PROFILE}; docs/profiles.md)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for 95%% intervals (1000)")
    parser.add_argument("--seed", type=int, default=12345, help="seed of the bootstrap resampling (12345)")
    parser.add_argument("--no-computation-aware", action="store_true", help="leave out the NAME_CA metrics")
    parser.add_argument("--metrics", nargs="+", default=None, metavar="NAME", action=MetricsAction,
                        help="only these metrics, by name or comma list (BLEU,AL; the _CA names printed are "
                             "accepted; default: all but the optional METEOR and CW)")
    parser.add_argument("--target-lang", default=None, metavar="LANG",
                        help="target language (default: the one the run recorded): SoftSegmenter splits words with "
                             "its Moses tokenizer as OmniSTEval's --lang, zh/ja align by character, METEOR uses "
                             "stems and WordNet synonyms for en only (English modules when no language is known)")
    parser.add_argument("--no-write", action="store_true", help="do not write scores.json and instance_scores.jsonl")
    add_foreign_arguments(parser)

    neural = parser.add_argument_group("neural metrics (the optional extras harness[comet], harness[bleurt])")
    neural.add_argument("--config", default=None, help="task config whose `metrics:` block sets COMET/XCOMET/BLEURT")
    neural.add_argument("--comet-model", default=None, metavar="PATH", help="COMET checkpoint folder or .ckpt")
    neural.add_argument("--xcomet-model", default=None, metavar="PATH", help="XCOMET checkpoint folder or .ckpt")
    neural.add_argument("--bleurt-model", default=None, metavar="PATH",
                        help="BLEURT checkpoint folder (bleurt-pytorch; the optional extra harness[bleurt])")
    neural.add_argument("--comet-batch-size", type=int, default=None, help="batch size (16, as comet-score)")
    neural.add_argument("--comet-precision", choices=("fp16", "fp32"), default=None,
                        help="fp16 (comet-score's) or fp32")
    neural.add_argument("--comet-gpus", type=int, choices=(0, 1), default=None, help="0: CPU (default), 1: GPU")
    neural.add_argument("--source-text", default=None, metavar="FILE",
                        help="source transcript, one line per instance (speech runs)")


def scorable_metrics() -> tuple[str, ...]:
    """Every base name `--metrics` accepts (short-form and long-form), in registry order."""
    from harness.metric_registry import (
        ALL_LATENCY_METRICS,
        DIAGNOSTIC_METRICS,
        LONGFORM_LATENCY_METRICS,
        QUALITY_METRICS,
    )

    return (*QUALITY_METRICS, *MODEL_METRICS, *ALL_LATENCY_METRICS, *LONGFORM_LATENCY_METRICS, *DIAGNOSTIC_METRICS)


class MetricsAction(argparse.Action):
    """`--metrics BLEU AL`, `--metrics BLEU,AL_CA` or `--metrics LAAL@orig`: base metric names, in order.

    A name printed in a table (`AL_CA`, `BLEU@mono`) means its base metric. A value that is no metric but a file
    or folder that exists is a run the user put after `--metrics`: it goes back to the runs (a metric list
    cannot swallow the run folder). Any other value is one line listing the valid names, with a suggestion."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from harness.fields import suggest
        from harness.metric_registry import spec_of

        valid = scorable_metrics()
        names: list[str] = list(getattr(namespace, self.dest, None) or [])
        runs: list[str] = list(getattr(namespace, "runs_after_metrics", None) or [])
        for value in values:
            if "," not in value and value not in valid and Path(value).exists():
                runs.append(value)
                continue
            for piece in (p.strip() for p in value.split(",")):
                if not piece:
                    continue
                base = piece.partition("@")[0]
                spec = spec_of(base) if base.endswith("_CA") else None
                if spec is not None:
                    base = spec.name
                if base not in valid:
                    guess = suggest(base, valid)
                    hint = f"; did you mean {guess!r}?" if guess else ""
                    parser.exit(2, f"{parser.prog}: error: --metrics: unknown metric {piece!r}{hint} (valid: "
                                f"{', '.join(valid)}; each also as NAME_CA where computation-aware)\n")
                if base not in names:
                    names.append(base)
        setattr(namespace, self.dest, names)
        namespace.runs_after_metrics = runs


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def _table_row(name: str, rec: dict[str, Any]) -> tuple[str, str, str, str]:
    ci = rec.get("ci95")
    ci_s = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-"
    extra = rec.get("unit") or ""
    if rec.get("reference_set"):
        extra = f"{extra} / {rec['reference_set']}" if extra else rec["reference_set"]
    return (name, _fmt(rec.get("score")), ci_s, extra)


def render_table(scores: dict[str, Any]) -> str:
    """A readable table of a scores object: metric, score, 95% interval, unit or reference set."""
    rows = [("metric", "score", "95% CI", "unit / reference set")]
    rows += [_table_row(name, rec) for name, rec in scores.items()
             if name not in ("counts", "info") and isinstance(rec, dict)]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    c = scores.get("counts", {})
    lines.append(
        f"instances: {c.get('instances')}  empty: {c.get('empty_instances')}  failed: {c.get('failed_instances')}"
    )
    signed = [name for name, rec in scores.items() if isinstance(rec, dict) and rec.get("signature")]
    neural = [name for name in signed if name in MODEL_METRICS]  # their own model signatures
    for name in [n for n in signed if n not in MODEL_METRICS][:1] + neural:
        lines += signature_lines(name, str(scores[name]["signature"]))
    return "\n".join(lines)


#: Width the signature lines are wrapped to (a terminal's default; a wrap by the terminal would cut a token).
SIGNATURE_WIDTH = 80


def signature_lines(name: str, signature: str, width: int = SIGNATURE_WIDTH) -> list[str]:
    """`NAME: sig` wrapped after a `|` so no line passes `width` and no `key:value` is cut; the continuation lines
    are indented under the first field (a field longer than a line stands alone)."""
    fields = signature.split("|")
    indent = " " * (len(name) + 2)
    lines: list[str] = []
    current = f"{name}: "
    for i, f in enumerate(fields):
        piece = f + ("|" if i < len(fields) - 1 else "")
        if len(current) + len(piece) > width and current.strip() and current != f"{name}: ":
            lines.append(current.rstrip())
            current = indent
        current += piece
    lines.append(current.rstrip())
    return lines


def _references(values: list[str] | None) -> dict[str, Path]:
    from harness.errors import HarnessError

    if not values:
        raise HarnessError("--segmentation needs --references (the reference sentences, one a line)")
    out: dict[str, Path] = {}
    for v in values:
        name, sep, path = v.partition("=")
        name, path = (name, path) if sep else ("orig", v)
        if name in out:
            raise HarnessError(f"--references: reference set {name!r} given twice")
        out[name] = Path(path)
    return out


def foreign_longform_records(given: str, args: argparse.Namespace) -> tuple[Path, list[dict[str, Any]]]:
    """(log path, records) of a long-form log of another tool, with the segmentation given on the command line;
    a recording the log has no line for is scored as empty output, with a warning line."""
    from harness import interop, layout
    from harness.profiles import get_profile

    path = Path(given)
    log = path if path.is_file() else layout.log_path(path)
    transcripts = Path(args.transcripts) if args.transcripts else None
    resegmentation = getattr(args, "resegmentation", None) or "softsegmenter"
    if getattr(args, "text_segmentation", None):
        return log, interop.read_text_longform(log, Path(args.text_segmentation), _references(args.references),
                                               unit=target_unit(args), transcripts=transcripts,
                                               resegmentation=resegmentation)
    records = interop.read_foreign_log(
        log, Path(args.segmentation), _references(args.references), transcripts=transcripts,
        simulstream_config=Path(args.simulstream_config) if args.simulstream_config else None,
        tokenizer=Path(args.simulstream_tokenizer) if args.simulstream_tokenizer else None,
        resegmentation=(getattr(args, "resegmentation", None)
                        or get_profile(getattr(args, "profile", None)).quality_resegmentation or "softsegmenter"),
        offset_delays=getattr(args, "offset_delays", False),
        warn=lambda line: print(f"warning: {line}", file=sys.stderr),
        fix_emission_ca=getattr(args, "fix_simuleval_emission_ca", False), strict=getattr(args, "strict", False))
    return log, records


def target_unit(args: argparse.Namespace) -> str:
    """The long-form target unit: `--latency-unit word|char` when given, else the one `--target-lang` implies."""
    from harness.scoring.options import CHAR_LEVEL_LANGS

    if getattr(args, "latency_unit", None) in ("word", "char"):
        return str(args.latency_unit)
    lang = (getattr(args, "target_lang", None) or "").split("-")[0].split("_")[0].lower()
    return "char" if lang in CHAR_LEVEL_LANGS else "word"


def add_foreign_arguments(parser: argparse.ArgumentParser, *, resegmentation: bool = True) -> None:
    """The flags that read another tool's long-form log (shared by `harness score` and `harness export`)."""
    lf = parser.add_argument_group("long-form logs of other tools (SimulEval/OmniSTEval JSONL, SimulStream logs)")
    lf.add_argument("--segmentation", default=None, metavar="YAML",
                    help="reference segmentation ({wav, offset, duration} per sentence): read the log as long-form")
    lf.add_argument("--offset-delays", action="store_true",
                    help="the log's delays start at each recording's first sentence (OmniSTEval's --offset_delays)")
    lf.add_argument("--references", nargs="+", default=None, metavar="[NAME=]FILE",
                    help="reference sentences, one a line, aligned with --segmentation (NAME defaults to orig)")
    lf.add_argument("--transcripts", default=None, metavar="FILE", help="source sentences aligned likewise")
    lf.add_argument("--simulstream-config", default=None, metavar="YAML",
                    help="SimulStream eval config of a metrics log (detokenizer_type: simuleval, hf or canary)")
    lf.add_argument("--simulstream-tokenizer", default=None, metavar="PATH",
                    help="the model's tokenizer (tokenizer.json or a tokenizer folder) for an hf/canary log; without "
                         "it SentencePiece and byte-level BPE pieces are joined by their fixed rules")
    lf.add_argument("--fix-simuleval-emission-ca", action="store_true",
                    help="read a SimulEval log's cumulative elapsed times as per-unit times, as OmniSTEval's "
                         "--fix_simuleval_emission_ca")
    lf.add_argument("--strict", action="store_true",
                    help="refuse a log that has no line for a recording of the segmentation (default: a warning, "
                         "the recording scored as empty output)")
    if resegmentation:
        lf.add_argument("--text-segmentation", default=None, metavar="FILE",
                        help="long-form text: docid=D,segid=S per reference sentence (OmniSTEval's "
                             "--text_segmentation); the log is a text file, one output line per document (quality)")
        lf.add_argument("--longform-end", choices=("reference", "audio"), default=None,
                        help="where a recording ends for LongYAAL: its last reference sentence (OmniSTEval's cut, "
                             "the official value; default) or the end of its audio")
        lf.add_argument("--resegmentation", choices=("softsegmenter", "mwersegmenter"), default=None,
                        help="resegmentation for quality (default: the log's, else softsegmenter)")


def model_metrics(args: argparse.Namespace) -> dict[str, Any]:
    """{COMET/XCOMET/BLEURT: ModelMetric} from `--config`'s `metrics:` block, then the command-line flags over it
    (`--comet-batch-size`, `--comet-precision` and `--comet-gpus` apply to every neural metric)."""
    from dataclasses import replace
    from pathlib import Path

    from harness.config import ModelMetric, default_precision, load_config

    found: dict[str, ModelMetric] = dict(load_config(args.config, check_files=False).metrics) if args.config else {}
    for name, path in (("COMET", args.comet_model), ("XCOMET", args.xcomet_model), ("BLEURT", args.bleurt_model)):
        if path is not None:
            found[name] = ModelMetric(name, Path(path), precision=default_precision(name),
                                      where=f"--{name.lower()}-model")
    for name, m in found.items():
        found[name] = replace(
            m,
            batch_size=args.comet_batch_size or m.batch_size,
            precision=args.comet_precision or m.precision,
            gpus=m.gpus if args.comet_gpus is None else args.comet_gpus,
        )
    return found


def scoring_options(args: argparse.Namespace) -> ScoringOptions:
    """The command line's scoring options, built once (a flag not given leaves the run's own setting); the profile
    gives the tokenizer where `--tokenizer` is not given."""
    from harness.profiles import get_profile

    source_texts = _source_text(args.source_text)
    profile = get_profile(args.profile)
    tokenizer = args.tokenizer or profile.tokenizer_for(_language(args.target_lang))
    return ScoringOptions(tokenizer=tokenizer, bootstrap=args.bootstrap, seed=args.seed, profile=profile.name,
                          computation_aware=not args.no_computation_aware,
                          metrics=tuple(args.metrics) if args.metrics is not None else None,
                          target_lang=args.target_lang, longform_end=args.longform_end or "reference",
                          target_unit=args.latency_unit if args.latency_unit in ("word", "char") else None,
                          resegmentation=getattr(args, "resegmentation", None), model_metrics=model_metrics(args),
                          source_texts=source_texts)


def _language(tag: str | None) -> str | None:
    return tag.split("-")[0].split("_")[0].lower() if tag else None


def warnings(scores: dict[str, Any]) -> list[str]:
    """What a reader of the scores must know: output that the official long-form latency leaves out, and scores
    computed without knowing the target language (long-form resegmentation, METEOR)."""
    counts = scores.get("counts") or {}
    info = scores.get("info") or {}
    out = []
    n = counts.get("trailing_units") or 0
    if n and info.get("recording_end", "reference") == "reference" and any(k.startswith("Long") for k in scores):
        out.append(f"{n} output units of {counts.get('recordings_with_trailing_units')} recording(s) were written "
                   "after the last reference sentence ended: LongYAAL leaves them out, as OmniSTEval does "
                   "(--longform-end audio counts them up to the end of the audio)")
    if info.get("segmentation") == "longform" and not info.get("target_lang"):
        out.append("no target language known: SoftSegmenter split no words (OmniSTEval without --lang); "
                   "pass --target-lang to score as IWSLT does")
    elif "METEOR" in scores and "target_lang" in info and not info["target_lang"]:
        out.append("no target language known: METEOR used its English stemmer and synonyms; pass --target-lang "
                   "(the run's target language) to score it in that language")
    return out


def _source_text(path: str | None) -> tuple[str, ...] | None:
    from harness.errors import HarnessError

    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            return tuple(fh.read().splitlines())
    except OSError as exc:
        raise HarnessError(f"--source-text: cannot read {path}: {exc.strerror}") from None


def _logs_per_folder(paths: list[str]) -> dict[Path, int]:
    """{folder: how many distinct logs of `paths` lie in it} (several: each writes files named after its log)."""
    from collections import Counter

    from harness import layout

    logs = {(Path(p) if Path(p).is_file() else layout.log_path(p)).resolve() for p in paths}
    return Counter(log.parent for log in logs)


def _require_log(path: str, foreign: bool) -> None:
    """A folder without instances.log: one line naming both forms (a run folder, another tool's log)."""
    from harness import layout
    from harness.errors import HarnessError

    folder = Path(path)
    if foreign or not folder.is_dir() or layout.log_path(folder).is_file():
        return
    raise HarnessError(f"{folder}: no instances.log in this folder; score a run folder or an instances.log, or "
                       f"another tool's long-form log (SimulStream, OmniSTEval) with `harness score LOG "
                       f"--segmentation YAML --references FILE`")


def check_foreign_flags(args: argparse.Namespace) -> None:
    """One line for long-form flags that do not go together."""
    from harness.errors import HarnessError
    from harness.metric_registry import QUALITY_METRICS

    if args.segmentation and args.text_segmentation:
        raise HarnessError("--segmentation (speech) and --text-segmentation (text) exclude each other")
    if args.offset_delays and not args.segmentation:
        raise HarnessError("--offset-delays moves the sentences of --segmentation (another tool's speech log)")
    late = [m for m in args.metrics or [] if m not in QUALITY_METRICS and m not in MODEL_METRICS]
    if args.text_segmentation and late:
        raise HarnessError(f"--text-segmentation: long-form text has no times, so no {', '.join(late)}")


def _check_tools(args: argparse.Namespace, options: ScoringOptions) -> None:
    """One line before any log is read where a tool the scoring needs cannot run here: the original mwerSegmenter
    of a 2025 profile, a BLEU tokenizer that is not installed."""
    from harness.errors import HarnessError

    if options.campaign.stream_segmenter == "mwerbinary":
        from harness.metrics.mwerbinary import check_binary

        check_binary()
    if args.metrics is None or "BLEU" in args.metrics:
        from harness.metrics.quality import tokenizer_problem

        problem = tokenizer_problem(options.tokenizer)
        if problem:
            raise HarnessError(f"--tokenizer: {problem}")


@contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off inside, restored after.

    String and latency scoring builds acyclic data (records, lists, numpy arrays: reference counting frees them);
    the collector would only walk the log's records again and again, some 15% of the time at 20,000 sentences
    (bench/score_bench.py)."""
    import gc

    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def run(args: argparse.Namespace) -> int:
    """Score each path, write scores.json and instance_scores.jsonl unless --no-write, print tables or JSON.

    Without neural metrics (whose model libraries may build reference cycles) the cyclic collector pauses."""
    neural = args.config or args.comet_model or args.xcomet_model or args.bleurt_model
    with nullcontext() if neural else _cycle_collector_paused():
        return _score_paths(args)


def _score_paths(args: argparse.Namespace) -> int:
    from harness import layout
    from harness.errors import HarnessError
    from harness.jsonio import write_json
    from harness.scoring import score_log, score_records_with_instances, write_instance_scores
    from harness.scoring.files import result_files

    args.path = list(args.path) + list(getattr(args, "runs_after_metrics", None) or [])
    if not args.path:
        raise HarnessError("name a run folder or an instances.log to score (RUN_DIR_OR_LOG)")
    check_foreign_flags(args)
    options = scoring_options(args)
    shared = _logs_per_folder(args.path)
    _check_tools(args, options)
    results = []
    for path in args.path:
        _require_log(path, bool(args.segmentation or args.text_segmentation))
        if args.segmentation or args.text_segmentation:
            log, records = foreign_longform_records(path, args)
            scores, rows = score_records_with_instances(records, options, latency_unit=args.latency_unit or "word",
                                                        source=str(log))
        else:
            scores, rows = score_log(path, options, latency_unit=args.latency_unit)
        for line in warnings(scores):
            print(f"warning: {path}: {line}", file=sys.stderr)
        target = None
        if not args.no_write:
            log = Path(path) if Path(path).is_file() else layout.log_path(path)
            target, instance_target = result_files(log, shared=shared[log.parent.resolve()] > 1)
            write_json(target, scores, ensure_ascii=False, mkdir=True)
            write_instance_scores(target.parent, rows, instance_target)
        results.append((path, scores, target))
    if args.format == "json":
        obj = results[0][1] if len(results) == 1 else {path: scores for path, scores, _ in results}
        print(json.dumps(obj, indent=1, ensure_ascii=False))
        return 0
    for path, scores, target in results:
        if len(results) > 1:
            print(f"== {path}")
        print(render_table(scores))
        if target is not None:
            print(f"wrote {target}")
    return 0
