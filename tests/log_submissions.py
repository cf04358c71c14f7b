"""Log submissions made from the bundled long-form data: a SimulStream metrics log per dataset whose output is
the reference translation, each word written `lag_ms` after its share of the sentence is spoken (so its LongYAAL
is about that lag), and the submission.yaml that names them."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
LONGFORM_CONFIG = ROOT / "configs" / "longform.yaml"
TRACK = "longform-en-es"


def simulstream_log(dataset: str, path: Path, lag_ms: float, *, words_from: str = "es",
                    computation_s: float = 0.05, drop_every: int = 0) -> Path:
    """A SimulStream metrics log for data/longform/DATASET: one chunk per word, `lag_ms` after its share of the
    sentence is spoken (at most at the end of its audio); `drop_every` n > 0 leaves out every n-th word (a lower
    quality)."""
    import soundfile

    seg = yaml.safe_load((ROOT / "data" / "longform" / f"{dataset}.yaml").read_text(encoding="utf-8"))
    lines = (ROOT / "data" / "longform" / f"{dataset}.{words_from}").read_text(encoding="utf-8").splitlines()
    wavs = list(dict.fromkeys(entry["wav"] for entry in seg))
    out = []
    for i, wav in enumerate(wavs):
        out.append({"id": i, "metadata": {"wav_name": wav}})
        end = soundfile.info(str(ROOT / "data" / "longform" / "talks" / wav)).duration
        for entry, text in zip(seg, lines, strict=True):
            if entry["wav"] != wav:
                continue
            words = [w for n, w in enumerate(text.split(), 1) if not drop_every or n % drop_every]
            for k, word in enumerate(words):
                at = entry["offset"] + entry["duration"] * (k + 1) / len(words) + lag_ms / 1000.0
                at = min(at, end)  # no system has processed more audio than its recording holds
                out.append({"id": i, "total_audio_processed": round(at, 3), "computation_time": computation_s,
                            "generated_tokens": [word], "deleted_tokens": []})
    path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in out), encoding="utf-8")
    return path


def log_submission(folder: Path, *, team: str = "logteam", system: str = "sys", lags: dict[str, float] | None = None,
                   hardware: str = "1x A100 80GB, 64 GB RAM", extra: str = "", logs: dict[str, str] | None = None,
                   drop_every: int = 0) -> Path:
    """A log submission folder on the long-form track, with a log per dataset of `lags` ({dataset: lag ms}),
    named in submission.yaml as `logs` says (default: each as DATASET.jsonl)."""
    folder.mkdir(parents=True, exist_ok=True)
    lags = {"test": 1000.0} if lags is None else lags
    for ds, lag in lags.items():
        simulstream_log(ds, folder / f"{ds}.jsonl", lag, drop_every=drop_every)
    named = logs if logs is not None else {ds: f"{ds}.jsonl" for ds in lags}
    listed = ", ".join(f"{k}: {v}" for k, v in named.items())
    (folder / "submission.yaml").write_text(
        f"team: {team}\nsystem: {system}\ntrack: {TRACK}\nlogs: {{{listed}}}\nhardware: \"{hardware}\"\n{extra}",
        encoding="utf-8")
    return folder


def regime_config(folder: Path, regime_from: str | None = "dev") -> Path:
    """configs/longform.yaml's en-es track with absolute data paths, regimes low ≤ 2000 ms and high ≤ 4000 ms of
    LongYAAL, decided on `regime_from`; written to FOLDER/task.yaml."""
    doc = yaml.safe_load(LONGFORM_CONFIG.read_text(encoding="utf-8"))
    track = doc["tracks"][0]
    doc["tracks"] = [track]
    track["regimes"] = [{"name": "low", "max_latency": 2000}, {"name": "high", "max_latency": 4000}]
    if regime_from:
        track["regime_from"] = regime_from

    def absolute(value: object) -> object:
        if isinstance(value, dict):
            return {k: absolute(v) for k, v in value.items()}
        return str((LONGFORM_CONFIG.parent / str(value)).resolve())

    track["datasets"] = {name: absolute(ds) for name, ds in track["datasets"].items()}
    path = folder / "task.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def simuleval_log(source: Path, references: Path, path: Path, k: int = 3) -> Path:
    """A SimulEval 1.1 instances.log of a wait-k text system whose output is the reference, with a `reference`
    field that is not (the harness scores against the dataset's references, never the log's)."""
    sources = source.read_text(encoding="utf-8").splitlines()
    refs = references.read_text(encoding="utf-8").splitlines()
    with path.open("w", encoding="utf-8") as fh:
        for i, (src, ref) in enumerate(zip(sources, refs, strict=True)):
            n = len(src.split())
            words = ref.split()
            fh.write(json.dumps({"index": i, "prediction": ref, "delays": [min(k + j, n) for j in range(len(words))],
                                 "elapsed": [0.0] * len(words), "prediction_length": len(words),
                                 "reference": "not the reference", "source": src, "source_length": n},
                                ensure_ascii=False) + "\n")
    return path
