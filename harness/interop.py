"""Long-form logs of the peers, both ways.

In: a SimulEval / OmniSTEval long-form JSONL (one line per recording: `source`, `prediction`, `delays`, `elapsed`,
`source_length`; no references) and a SimulStream metrics log (`metadata` lines naming each recording's wav, then
one line per processed chunk with `generated_tokens`, `deleted_tokens`, `total_audio_processed` and
`computation_time` in seconds) become harness records once the reference segmentation and sentences are attached.

Out: a harness long-form run as OmniSTEval's inputs (JSONL hypothesis, segmentation YAML in seconds, reference
lines) and as a SimulStream metrics log with its evaluation config (`detokenizer_type: simuleval`), which
`simulstream.metrics.score_latency` and `omnisteval longform` read.

SimulStream's reader is re-implemented here (final text and per-word delays from the generated and deleted tokens,
a partly rewritten last word taking the time of its rewrite) for every detokenizer: `simuleval`, and `hf` / `canary`
with the model's tokenizer where the organizer gives it (`tokenizer=`), else with the fixed joining of SentencePiece
or byte-level BPE pieces (`harness.detokenizers`); pieces of neither kind are refused with one line.
A chunk's computation-aware time is its audio time plus its computation time, as SimulStream defines it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from harness.data.longform import match_recording, read_segmentation
from harness.data.text import read_lines
from harness.errors import HarnessError
from harness.jsonio import iter_jsonl
from harness.recordings import longform_info
from harness.runlog.reader import validate_record
from harness.runlog.record import DELAY_TOLERANCE
from harness.yamlio import read_yaml

__all__ = ["read_stream_laal_tsv", "fix_simuleval_emission_ca",
           "read_jsonl_hypotheses", "read_simulstream_log", "is_simulstream_log", "attach_segmentation",
           "read_foreign_log", "read_text_longform", "read_text_segmentation", "write_omnisteval_inputs",
           "write_simulstream_log"]


def is_simulstream_log(path: Path) -> bool:
    """Whether `path` looks like a SimulStream metrics log (its first object has `metadata` or chunk fields)."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    obj = json.loads(line)
                    return isinstance(obj, dict) and ("metadata" in obj or "total_audio_processed" in obj
                                                      or "model_loading_time" in obj)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return False


def fix_simuleval_emission_ca(delays: Sequence[float], elapsed: Sequence[float]) -> list[float]:
    """OmniSTEval 0.1.10's `--fix_simuleval_emission_ca`: SimulEval's cumulative `elapsed` as per-unit times,
    `max(e_i - e_(i-1) + d_(i-1), new_(i-1))` (the first unit keeps its own)."""
    out: list[float] = []
    for i, e in enumerate(elapsed):
        out.append(e if i == 0 else max(e - elapsed[i - 1] + delays[i - 1], out[-1]))
    return out


def read_jsonl_hypotheses(path: Path, *, fix_emission_ca: bool = False) -> list[dict[str, Any]]:
    """SimulEval/OmniSTEval long-form lines as records (index, recording name, prediction, delays, elapsed).

    SimulEval's `elapsed` is cumulative over a recording: the records say so (`elapsed_kind: simuleval`) for a
    profile to read it its way, unless `fix_emission_ca` turns it into per-unit times here as OmniSTEval does."""
    out = []
    for i, (n, obj) in enumerate(iter_jsonl(Path(path), "log")):
        source = obj.get("source")
        name = source[0] if isinstance(source, list) and source else source
        if not isinstance(name, str) or not isinstance(obj.get("prediction"), str):
            raise HarnessError(f"{path}: line {n}: needs 'source' (the recording) and 'prediction'")
        rec = {"index": obj.get("index", i), "source": [name], "prediction": obj["prediction"],
               "delays": obj.get("delays") or [], "source_length": obj.get("source_length")}
        if obj.get("elapsed"):
            rec["elapsed"] = obj["elapsed"]
            if fix_emission_ca and _numbers(rec["elapsed"]) and _numbers(rec["delays"]) \
                    and len(rec["elapsed"]) == len(rec["delays"]):
                rec["elapsed"] = fix_simuleval_emission_ca(rec["delays"], rec["elapsed"])
            else:
                rec["elapsed_kind"] = "simuleval"
        out.append(rec)
    return out


def _numbers(values: Any) -> bool:
    return isinstance(values, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _detokenizer(config: Path | None, tokens: list[str] | None = None, tokenizer: Path | None = None
                 ) -> tuple[str, Any]:
    cfg: dict[str, Any] = {"detokenizer_type": "simuleval", "latency_unit": "word"}
    if config is not None:
        loaded = read_yaml(Path(config), missing="SimulStream eval config not found") or {}
        cfg.update(loaded if isinstance(loaded, dict) else {})
    kind, unit = cfg.get("detokenizer_type"), cfg.get("latency_unit")
    if kind in ("hf", "canary"):
        from harness.detokenizers import tokenizer_detokenizer

        return "word", tokenizer_detokenizer(kind, tokens or [], tokenizer, str(config))
    if kind != "simuleval":
        raise HarnessError(f"{config}: detokenizer_type {kind!r} is not one of simuleval, hf, canary")
    if unit == "word":
        def join_words(tokens: list[str]) -> str:
            return " ".join(tokens)

        join_words.word_tokens = True  # type: ignore[attr-defined]
        return unit, join_words
    if unit == "char":
        return unit, lambda tokens: "".join(tokens)
    if unit == "spm":
        return unit, lambda tokens: "".join(tokens).replace("\u2581", " ").strip()
    raise HarnessError(f"{config}: latency_unit {unit!r} is not one of word, char, spm")


def _words(text: str) -> list[str]:
    return [w for w in text.split(" ") if w]


class _Replay:
    """SimulStream's reconstruction of one recording, chunk by chunk: tokens, words, per-word delays and CA times.

    Words are the detokenized text split on spaces. With the word-level `simuleval` detokenizer and tokens that are
    single words, words and tokens coincide and each chunk costs only its own tokens; otherwise the text is
    detokenized again at every chunk, as SimulStream does.
    """

    def __init__(self, detok: Any, where: str) -> None:
        self.detok, self.where = detok, where
        self.one_to_one = getattr(detok, "word_tokens", False)  # tokens are words: no text to rebuild
        self.tokens: list[str] = []
        self.words: list[str] = []
        self.delays: list[float] = []
        self.elapsed: list[float] = []
        self.revised = False

    def chunk(self, at: float, ca: float, deleted: list[str], generated: list[str]) -> None:
        if not deleted and not generated:  # a chunk that writes nothing changes nothing
            return
        if deleted:
            self.revised = True
            if self.tokens[len(self.tokens) - len(deleted):] != deleted:
                raise HarnessError(f"{self.where}: deleted tokens {deleted!r} are not the last ones")
        if self.one_to_one and all(t and " " not in t for t in deleted + generated):
            self._words_are_tokens(at, ca, deleted, generated)
        else:
            self._rebuild(at, ca, deleted, generated)

    def _words_are_tokens(self, at: float, ca: float, deleted: list[str], generated: list[str]) -> None:
        if deleted:
            n = len(deleted)
            del self.tokens[-n:], self.words[-n:], self.delays[-n:], self.elapsed[-n:]
        self.tokens.extend(generated)
        self.words.extend(generated)
        self.delays.extend([at] * len(generated))
        self.elapsed.extend([ca] * len(generated))

    def _rebuild(self, at: float, ca: float, deleted: list[str], generated: list[str]) -> None:
        if deleted:
            before = self.words
            self.tokens = self.tokens[:-len(deleted)]
            self.words = _words(self.detok(self.tokens))
            self.delays, self.elapsed = self.delays[:len(self.words)], self.elapsed[:len(self.words)]
            if self.words and before[len(self.words) - 1] != self.words[-1]:
                self.delays[-1], self.elapsed[-1] = at, ca
        self.tokens = self.tokens + generated
        before = self.words
        self.words = _words(self.detok(self.tokens))
        if len(self.words) > len(before):
            self.delays += [at] * (len(self.words) - len(before))
            self.elapsed += [ca] * (len(self.words) - len(before))
        if before and len(self.words) >= len(before) and self.words[len(before) - 1] != before[-1]:
            self.delays[len(before) - 1], self.elapsed[len(before) - 1] = at, ca


def _replay(lines: list[dict[str, Any]], detok: Any, where: str
            ) -> tuple[list[str], list[float], list[float], list[dict[str, Any]], bool]:
    """SimulStream's reconstruction of one recording: (final words, delays, CA times, revisions, revised?)."""
    replay = _Replay(detok, where)
    revisions: list[dict[str, Any]] = []
    revising = any(obj.get("deleted_tokens") for obj in lines)  # a re-translation log: keep every revision's text
    for obj in lines:
        at = float(obj["total_audio_processed"]) * 1000.0
        ca = at + float(obj.get("computation_time", 0.0)) * 1000.0
        deleted = list(obj.get("deleted_tokens") or [])
        generated = list(obj.get("generated_tokens") or [])
        replay.chunk(at, ca, deleted, generated)
        if revising and (deleted or generated):
            revisions.append({"delay": at, "elapsed": ca, "text": " ".join(replay.words)})
    return replay.words, replay.delays, replay.elapsed, revisions, replay.revised


def read_simulstream_log(path: Path, config: Path | None = None, tokenizer: Path | None = None
                         ) -> list[dict[str, Any]]:
    """One record per recording of a SimulStream metrics log: final text, per-word delays and CA times (ms);
    `tokenizer` (a tokenizer.json or folder) joins the pieces of an `hf` or `canary` log."""
    lines = list(iter_jsonl(Path(path), "log"))
    _, detok = _detokenizer(config, [t for _, obj in lines for t in obj.get("generated_tokens") or []
                                     if isinstance(t, str)], tokenizer)
    names: dict[Any, str] = {}
    lines_by_id: dict[Any, list[dict[str, Any]]] = {}
    for n, obj in lines:
        if "metadata" in obj:
            meta = obj["metadata"]
            if not isinstance(meta, dict) or not isinstance(meta.get("wav_name"), str):
                raise HarnessError(f"{path}: line {n}: metadata without a wav_name")
            names[obj.get("id")] = meta["wav_name"]
        elif "generated_tokens" in obj:
            if obj.get("id") not in names:
                raise HarnessError(f"{path}: line {n}: id {obj.get('id')!r} has no metadata line before it")
            lines_by_id.setdefault(obj["id"], []).append(obj)
    records = []
    for index, (cid, wav) in enumerate(names.items()):
        words, delays, elapsed, revisions, revised = _replay(lines_by_id.get(cid, []), detok,
                                                            f"{path}: recording {wav}")
        rec: dict[str, Any] = {"index": index, "source": [wav], "prediction": " ".join(words),
                               "delays": delays, "elapsed": elapsed, "source_length": None}
        if revised:
            rec["revisions"] = revisions
        records.append(rec)
    return records


def read_foreign_log(log: Path, segmentation: Path, references: dict[str, Path], *, transcripts: Path | None = None,
                     simulstream_config: Path | None = None, resegmentation: str = "softsegmenter",
                     warn: Callable[[str], None] | None = None, tokenizer: Path | None = None,
                     offset_delays: bool = False, fix_emission_ca: bool = False, strict: bool = False
                     ) -> list[dict[str, Any]]:
    """A long-form log of another tool (SimulStream metrics log or SimulEval/OmniSTEval JSONL) as harness records,
    with the reference segmentation attached; `warn` hears of recordings the log has no line for (an error under
    `strict`) and of output past a recording's length; `offset_delays`: see `attach_segmentation`;
    `fix_emission_ca` reads a SimulEval log's CA times as OmniSTEval's `--fix_simuleval_emission_ca`."""
    if is_simulstream_log(log):
        records = read_simulstream_log(log, simulstream_config, tokenizer)
    else:
        records = read_jsonl_hypotheses(log, fix_emission_ca=fix_emission_ca)
    return attach_segmentation(records, segmentation, references, transcripts, resegmentation, warn=warn,
                               log=log, offset_delays=offset_delays, strict=strict)


def read_text_segmentation(path: Path) -> list[int]:
    """The document of each reference sentence of an OmniSTEval text segmentation (`docid=D,segid=S` a line,
    documents numbered from 0)."""
    docs = []
    for n, line in enumerate(read_lines(path), 1):
        try:
            fields = dict(part.split("=", 1) for part in line.strip().split(","))
            docs.append(int(fields["docid"]))
            int(fields["segid"])
        except (ValueError, KeyError):
            raise HarnessError(f"{path}: line {n}: expected docid=DOC,segid=SEG, got {line.strip()[:80]!r}") from None
    if not docs:
        raise HarnessError(f"{path}: no sentence")
    if min(docs) < 0:
        raise HarnessError(f"{path}: document ids start at 0, got {min(docs)}")
    return docs


def read_text_longform(hypotheses: Path, text_segmentation: Path, references: dict[str, Path], *, unit: str,
                       transcripts: Path | None = None, resegmentation: str = "softsegmenter") -> list[dict[str, Any]]:
    """Long-form text (OmniSTEval's `--text_segmentation` with a text hypothesis): one output line per document,
    resegmented onto that document's reference sentences. Nothing is timed: the records carry `timed: false`,
    for quality only (their units, in `unit`, all at time 0)."""
    from harness.units import split_units

    docs = read_text_segmentation(text_segmentation)
    sets = {name: read_lines(p) for name, p in references.items()}
    src = read_lines(transcripts) if transcripts is not None else None
    for name, lines in [*sets.items(), *([("transcripts", src)] if src is not None else [])]:
        if len(lines) != len(docs):
            raise HarnessError(f"{references.get(name, transcripts)}: {len(lines)} lines but {text_segmentation} "
                               f"has {len(docs)} sentences")
    outputs = read_lines(hypotheses)
    if len(outputs) != max(docs) + 1:
        raise HarnessError(f"{hypotheses}: {len(outputs)} lines but {text_segmentation} names {max(docs) + 1} "
                           "documents (one output line per document)")
    records = []
    for d, text in enumerate(outputs):
        rows = [n for n, doc in enumerate(docs) if doc == d]
        if not rows:
            raise HarnessError(f"{text_segmentation}: document {d} has no sentence")
        info = longform_info(f"doc{d}", [[0.0, 0.0] for _ in rows],
                             {name: [lines[n].strip() for n in rows] for name, lines in sets.items()},
                             transcripts=[src[n].strip() for n in rows] if src is not None else None,
                             resegmentation=resegmentation, timed=False)
        records.append({"index": d, "source": [f"doc{d}"], "prediction": text.strip(),
                        "delays": [0.0] * len(split_units(text, unit)), "source_length": None, "longform": info,
                        "status": "ok", "latency_unit": "word",
                        "references": {name: " ".join(v) for name, v in info["sentences"].items()}})
    return records


def _empty_recording(wav: str, index: int, end_ms: float) -> dict[str, Any]:
    """The record of a recording that a log has no line for: no output, its audio as long as its sentences."""
    return {"index": index, "source": [wav], "prediction": "", "delays": [], "elapsed": [], "source_length": end_ms}


def attach_segmentation(records: Sequence[dict[str, Any]], segmentation: Path, references: dict[str, Path],
                        transcripts: Path | None = None, resegmentation: str = "softsegmenter", *,
                        warn: Callable[[str], None] | None = None, log: Path | None = None,
                        offset_delays: bool = False, strict: bool = False, target_lang: str | None = None
                        ) -> list[dict[str, Any]]:
    """Records with each recording's sentences attached (`longform`, with `target_lang` when given), matched by wav
    path, name or stem.

    A recording of the segmentation that no record matches is scored as empty output; `warn` (when given) hears of
    them in one line that counts them. Without `warn`, or with `strict`, it is an error, as is a record that
    matches no recording. `offset_delays` (OmniSTEval's `--offset_delays`): the log's times start at each
    recording's first sentence, so every sentence of a recording moves earlier by the offset of its first one."""
    entries, sets, src = _sentence_files(segmentation, references, transcripts)
    if offset_delays:
        entries = _offset_entries(entries)
    records, per = _assign(list(records), entries, segmentation, None if strict else warn, log)
    out = []
    for rec, rows in zip(records, per, strict=True):
        if not rows:
            raise HarnessError(f"{segmentation}: no sentence for recording {rec['source'][0]}")
        info = longform_info(Path(rec["source"][0]).stem, [[entries[n][1], entries[n][2]] for n in rows],
                             {name: [lines[n].strip() for n in rows] for name, lines in sets.items()},
                             transcripts=[src[n].strip() for n in rows] if src is not None else None,
                             resegmentation=resegmentation, target_lang=target_lang)
        end = max(entries[n][1] + entries[n][2] for n in rows)
        new = {**rec, "source_length": _audio_length(rec, end, warn, log), "longform": info, "status": "ok",
               "latency_unit": "word", "references": {name: " ".join(v) for name, v in info["sentences"].items()}}
        problem = validate_record(new, "")
        if problem is not None:
            raise HarnessError(f"recording {rec['source'][0]}: {problem}")
        out.append(new)
    return out


def _offset_entries(entries: list[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
    """Each entry's offset less that of the first entry of its run of entries of one recording (as OmniSTEval's
    `--offset_delays` moves them)."""
    out: list[tuple[str, float, float]] = []
    first = 0.0
    for n, (wav, off, dur) in enumerate(entries):
        if n == 0 or entries[n - 1][0] != wav:
            first = off
        out.append((wav, off - first, dur))
    return out


def _sentence_files(segmentation: Path, references: dict[str, Path], transcripts: Path | None
                    ) -> tuple[list[tuple[str, float, float]], dict[str, list[str]], list[str] | None]:
    """(segmentation entries, reference lines by set, transcript lines), every file as long as the segmentation."""
    entries = read_segmentation(segmentation)
    sets = {name: read_lines(p) for name, p in references.items()}
    for name, lines in sets.items():
        if len(lines) != len(entries):
            raise HarnessError(f"{references[name]}: {len(lines)} lines but {segmentation} has {len(entries)} "
                               "sentences")
    return entries, sets, read_lines(transcripts) if transcripts is not None else None


def _assign(records: list[dict[str, Any]], entries: list[tuple[str, float, float]], segmentation: Path,
            warn: Callable[[str], None] | None, log: Path | None) -> tuple[list[dict[str, Any]], list[list[int]]]:
    """(records, the segmentation entries of each): an empty record is added for a recording the log lacks."""
    sources = tuple(Path(r["source"][0]) for r in records)
    per: list[list[int]] = [[] for _ in records]
    missing: dict[str, list[int]] = {}
    for n, (wav, _, _) in enumerate(entries):
        k = match_recording(wav, sources)
        if k is not None:
            per[k].append(n)
        else:
            missing.setdefault(wav, []).append(n)
    if missing:
        total = len(missing) + sum(1 for rows in per if rows)
        names = ", ".join(f"{wav} ({len(rows)} sentences)" for wav, rows in list(missing.items())[:3])
        line = (f"{log or 'the log'} has no line for {len(missing)} of the {total} recordings of {segmentation}: "
                f"{names}{', ...' if len(missing) > 3 else ''}")
        if warn is None:
            raise HarnessError(line)
        warn(f"{line}; scored as empty output (--strict refuses such a log)")
    for wav, rows in missing.items():
        end = max(entries[n][1] + entries[n][2] for n in rows)
        records.append(_empty_recording(wav, max((int(r.get("index", 0)) for r in records), default=-1) + 1, end))
        per.append(rows)
    return records, per


def _audio_length(record: dict[str, Any], sentences_end: float, warn: Callable[[str], None] | None = None,
                  log: Path | None = None) -> float:
    """The recording's `source_length` where the log gives a usable one, else as far as its sentences and output
    reach. Output written after the length the log gives (SimulEval's last segment can end past the audio) is
    scored as OmniSTEval scores it, which reads no length from a long-form log: the recording is taken to last
    until that output, and `warn` hears of it."""
    last = record["delays"][-1] if record.get("delays") else 0.0
    length = record.get("source_length")
    if not (isinstance(length, (int, float)) and not isinstance(length, bool) and 0 < length < float("inf")):
        return max(sentences_end, last)
    if last > length * (1 + DELAY_TOLERANCE):
        if warn is not None:
            late = sum(1 for d in record["delays"] if d > length * (1 + DELAY_TOLERANCE))
            warn(f"{log or 'the log'}: recording {record['source'][0]}: {late} delay(s) up to {last:g} ms lie past "
                 f"its source_length ({length:g} ms), by up to {last - length:g} ms: scored as OmniSTEval scores "
                 "them (the recording is taken to last until its last output)")
        return last
    return length


def write_omnisteval_inputs(records: Sequence[dict[str, Any]], folder: Path) -> dict[str, Path]:
    """hypotheses.jsonl, segmentation.yaml (seconds) and one reference file per set, for `omnisteval longform`."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"hypothesis": folder / "hypotheses.jsonl", "segmentation": folder / "segmentation.yaml"}
    seg: list[dict[str, Any]] = []
    sets: dict[str, list[str]] = {}
    with paths["hypothesis"].open("w", encoding="utf-8") as f:
        for rec in sorted(records, key=lambda r: r["index"]):
            info = rec["longform"]
            wav = f"{info['recording']}.wav"
            f.write(json.dumps({"source": [wav], "prediction": rec["prediction"], "delays": rec["delays"],
                                "elapsed": rec.get("elapsed") or [], "source_length": rec["source_length"]},
                               ensure_ascii=False) + "\n")
            seg.extend({"wav": wav, "offset": off / 1000.0, "duration": dur / 1000.0} for off, dur in info["segments"])
            for name, lines in info["sentences"].items():
                sets.setdefault(name, []).extend(lines)
    paths["segmentation"].write_text(yaml.safe_dump(seg, sort_keys=False), encoding="utf-8")
    for name, lines in sets.items():
        paths[f"references.{name}"] = folder / f"references.{name}.txt"
        paths[f"references.{name}"].write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return paths


def _audio_end_s(record: dict[str, Any]) -> float:
    """The recording's length in seconds: its `source_length`, else the end of its last sentence."""
    length = record.get("source_length")
    if isinstance(length, (int, float)) and not isinstance(length, bool) and 0 < length < float("inf"):
        return float(length) / 1000.0
    return max(off + dur for off, dur in record["longform"]["segments"]) / 1000.0


def write_simulstream_log(records: Sequence[dict[str, Any]], folder: Path) -> dict[str, Path]:
    """metrics.jsonl and eval.yaml for `simulstream.metrics.score_latency` (plus the OmniSTEval inputs).

    Each group of words written at one delay becomes one chunk line; its computation time is the CA time minus the
    audio time, so SimulStream's reader gives back the harness's delays and CA times.
    """
    paths = write_omnisteval_inputs(records, folder)
    paths["log"] = folder / "metrics.jsonl"
    paths["config"] = folder / "eval.yaml"
    with paths["log"].open("w", encoding="utf-8") as f:
        for cid, rec in enumerate(sorted(records, key=lambda r: r["index"])):
            f.write(json.dumps({"id": cid, "metadata": {"wav_name": f"{rec['longform']['recording']}.wav"}}) + "\n")
            words = rec["prediction"].split()
            elapsed = rec.get("elapsed") or rec["delays"]
            if not words:  # no output: one chunk that generates nothing (SimulStream's reader needs a chunk)
                f.write(json.dumps({"id": cid, "total_audio_processed": _audio_end_s(rec), "computation_time": 0.0,
                                    "generated_tokens": [], "deleted_tokens": []}) + "\n")
            i = 0
            while i < len(words):
                j = i
                while j < len(words) and rec["delays"][j] == rec["delays"][i] and elapsed[j] == elapsed[i]:
                    j += 1
                f.write(json.dumps({"id": cid, "total_audio_processed": rec["delays"][i] / 1000.0,
                                    "computation_time": (elapsed[i] - rec["delays"][i]) / 1000.0,
                                    "generated_tokens": words[i:j], "deleted_tokens": []},
                                   ensure_ascii=False) + "\n")
                i = j
    paths["config"].write_text("detokenizer_type: simuleval\nlatency_unit: word\n", encoding="utf-8")
    return paths


STREAM_LAAL_COLUMNS = ("BLEU", "StreamLAAL", "StreamLAAL_CA")


def read_stream_laal_tsv(path: Path) -> tuple[str, dict[str, float] | None]:
    """(tool version, values) of what FBK's stream_laal.py printed (its first line `StreamLAAL v2.0.`, its last two
    the header and the values of BLEU, StreamLAAL, StreamLAAL_CA); values None where it stopped before them."""
    import re

    try:
        lines = [x for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"{path}: cannot read: {exc}") from None
    version = re.match(r"StreamLAAL v([\d.]+?)\.?$", lines[0].strip()) if lines else None
    if version is None:
        raise HarnessError(f"{path}: not a stream_laal.py output (no 'StreamLAAL vX.' line first)")
    if len(lines) < 3 or lines[-2].split("\t") != list(STREAM_LAAL_COLUMNS):
        return version.group(1), None
    try:
        values = [float(x) for x in lines[-1].split("\t")]
    except ValueError:
        return version.group(1), None
    return version.group(1), dict(zip(STREAM_LAAL_COLUMNS, values, strict=False))
