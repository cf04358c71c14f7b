"""A text task with extra context (a tiny PDF made with pypdf) for the context tests: track `text-en-es-context`
names the PDF, track `text-en-es` the same data without it; the context-terms template as a submission, with the
probes of the Docker context tests (tests/test_context_docker.py, and on a swarm tests/test_swarm_docker.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from harness.images.base import DEFAULT_TAG
from harness.layout import ResultsDir
from tests.templates_util import TEMPLATES

SOURCES = ["we stream with simulstream today", "longyaal measures the delay"]
PAPER_TEXT = "We present SimulStream and LongYAAL for IWSLT."
CLIENT = 'harness client --server "$HARNESS_SERVER_URL" --agent /app/agent.py'
#: the prepare probe: what it sees (network interfaces, the context list) into the prepared folder
PROBE_PREPARE = ('ls /sys/class/net > "$HARNESS_PREPARED_DIR/net.txt"; '
                 'python3 -c "import socket; socket.create_connection((\'8.8.8.8\', 53), 3)" '
                 '|| echo NET-OFF >> "$HARNESS_PREPARED_DIR/net.txt"; python3 /app/prepare.py')
#: the run probe: the variables and mounts, printed into client.log, then the agent
PROBE_COMMAND = ('echo "LIST=$HARNESS_CONTEXT_LIST PREPARED=$HARNESS_PREPARED_DIR"; cat "$HARNESS_CONTEXT_LIST"; '
                 'ls -l /context/docs; touch /context/x 2>/dev/null && echo CONTEXT-WRITABLE || echo CONTEXT-RO; '
                 'touch /prepared/y 2>/dev/null && echo PREPARED-WRITABLE || echo PREPARED-RO; '
                 'cat /prepared/net.txt; ' + CLIENT)
PLAIN_COMMAND = ('echo "LIST=${HARNESS_CONTEXT_LIST:-none} PREPARED=${HARNESS_PREPARED_DIR:-none}"; '
                 'ls /context 2>/dev/null || echo NO-CONTEXT; ' + CLIENT)


def context_template(subs: Path, name: str, track: str, command: str | None = None,
                     prepare: str | list[str] | None = None) -> None:
    """A copy of agent_templates/context_terms (FROM this checkout's base), with its own track/commands."""
    from agent_templates.fill_wheels import fill

    template = TEMPLATES / "context_terms"
    assert fill(template) == 0  # git-ignored wheels/, kept between runs
    folder = subs / name
    shutil.copytree(template, folder)
    dockerfile = folder / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("FROM harness-base:latest", f"FROM {DEFAULT_TAG}"))
    doc = (folder / "submission.yaml").read_text(encoding="utf-8").replace("text-en-es-context", track)
    lines = [ln for ln in doc.splitlines() if not (command and ln.startswith("command:"))
             and not (prepare is not None and ln.startswith("prepare:"))]
    if command:
        lines.append(f"command: {json.dumps(command)}")
    if prepare:
        lines.append(f"prepare: {json.dumps(prepare)}")
    (folder / "submission.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def evaluate_runs(subs: Path, cfg: Path, out: Path, *extra: str) -> dict[str, dict]:
    """`harness evaluate` of the dev set; its runs by submission."""
    proc = subprocess.run([sys.executable, "-m", "harness", "evaluate", str(subs), "--config", str(cfg), "--output",
                           str(out), "--dataset", "dev", *extra], capture_output=True, text=True, timeout=1800)
    assert (out / "summary.json").is_file(), proc.stderr
    return {r["submission"]: r for r in json.loads(ResultsDir(out).summary.read_text())["runs"]}


def make_pdf(path: Path, text: str = PAPER_TEXT) -> Path:
    """A one-page PDF whose text layer is `text` (Helvetica), written with pypdf."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(width=300, height=100)
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica")})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject(
        {NameObject("/F1"): writer._add_object(font)})})
    stream = DecodedStreamObject()
    stream.set_data(f"BT /F1 10 Tf 10 50 Td ({text}) Tj ET".encode("latin-1"))
    page[NameObject("/Contents")] = writer._add_object(stream)
    with open(path, "wb") as f:
        writer.write(f)
    return path


def make_context_task(root: Path, extra_limits: str = "") -> Path:
    """Sources, references, `papers/talk1.pdf`, the list `context.txt` and `task.yaml`; the config path."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "src.en").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    (root / "ref.es").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    (root / "papers").mkdir(exist_ok=True)
    make_pdf(root / "papers" / "talk1.pdf")
    (root / "context.txt").write_text("papers/talk1.pdf\n", encoding="utf-8")
    cfg = root / "task.yaml"
    cfg.write_text(f"""task: t
tracks:
  - name: text-en-es-context
    modality: text
    source_lang: en
    target_lang: es
    datasets:
      dev: {{source: src.en, references: ref.es, context: context.txt}}
  - name: text-en-es
    modality: text
    source_lang: en
    target_lang: es
    datasets:
      dev: {{source: src.en, references: ref.es}}
{extra_limits}""", encoding="utf-8")
    return cfg
