"""A text task with extra context (a tiny PDF made with pypdf) for the context tests: track `text-en-es-context`
names the PDF, track `text-en-es` the same data without it."""

from __future__ import annotations

from pathlib import Path

SOURCES = ["we stream with simulstream today", "longyaal measures the delay"]
PAPER_TEXT = "We present SimulStream and LongYAAL for IWSLT."


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
