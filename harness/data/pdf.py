"""A minimal PDF writer: pages of plain text in Helvetica, enough for a paper's text layer (extra context).

No dependency: the file is PDF 1.4 with one content stream per page and an exact cross-reference table, so any PDF
library (pypdf, poppler) reads its text back.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.jsonio import atomic_path

LINE_CHARS = 90
LINES_PER_PAGE = 60


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _wrap(paragraphs: Sequence[str]) -> list[str]:
    lines: list[str] = []
    for para in paragraphs:
        line = ""
        for word in para.split():
            if line and len(line) + 1 + len(word) > LINE_CHARS:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
        lines.append("")
    return lines


def write_pdf(path: Path, title: str, paragraphs: Sequence[str]) -> Path:
    """Write `title` and `paragraphs` as a PDF at `path`, atomically (characters outside latin-1 become `?`)."""
    lines = [title, "", *_wrap(paragraphs)]
    pages = [lines[i:i + LINES_PER_PAGE] for i in range(0, len(lines), LINES_PER_PAGE)]
    font_id, pages_id = 3, 2
    objects: dict[int, bytes] = {1: f"<< /Type /Catalog /Pages {pages_id} 0 R >>".encode(),
                                 font_id: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
                                          b"/Encoding /WinAnsiEncoding >>"}
    kids = []
    for n, page in enumerate(pages):
        page_id, content_id = 4 + 2 * n, 5 + 2 * n
        kids.append(f"{page_id} 0 R")
        ops = ["BT", "/F1 10 Tf", "12 TL", "50 800 Td"]
        ops += [f"({_escape(line)}) Tj T*" for line in page]
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1", errors="replace")  # WinAnsi: others become ?
        objects[content_id] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
        objects[page_id] = (f"<< /Type /Page /Parent {pages_id} 0 R /MediaBox [0 0 595 842] "
                            f"/Resources << /Font << /F1 {font_id} 0 R >> >> /Contents {content_id} 0 R >>").encode()
    objects[pages_id] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>".encode()
    body = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for oid in sorted(objects):
        offsets[oid] = len(body)
        body += b"%d 0 obj\n" % oid + objects[oid] + b"\nendobj\n"
    xref = len(body)
    count = max(objects) + 1
    body += b"xref\n0 %d\n0000000000 65535 f \n" % count
    for oid in range(1, count):
        body += b"%010d 00000 n \n" % offsets[oid]
    body += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (count, xref)
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(bytes(body))
    return path
