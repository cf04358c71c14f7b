"""Terms of the talks' papers (extra context): the words a paper spells with capitals or digits (names, systems,
acronyms: `SimulStream`, `LongYAAL`, `IWSLT`), read from its PDF with pypdf."""

from __future__ import annotations

import re
from pathlib import Path

TERMS_FILE = "terms.txt"
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]")


def pdf_terms(paths: list[str]) -> dict[str, str]:
    """{lowercased term: the paper's spelling} for every word of the PDFs that is not all lowercase."""
    from pypdf import PdfReader

    terms: dict[str, str] = {}
    for path in paths:
        for page in PdfReader(path).pages:
            for word in _WORD.findall(page.extract_text() or ""):
                if word != word.lower():
                    terms.setdefault(word.lower(), word)
    return terms


def read_list(list_file: str) -> list[str]:
    """The documents of a context list (one path a line)."""
    return [ln.strip() for ln in Path(list_file).read_text(encoding="utf-8").splitlines() if ln.strip()]


def write_terms(terms: dict[str, str], folder: str) -> Path:
    path = Path(folder) / TERMS_FILE
    path.write_text("".join(f"{k}\t{v}\n" for k, v in sorted(terms.items())), encoding="utf-8")
    return path


def read_terms(folder: str) -> dict[str, str]:
    path = Path(folder) / TERMS_FILE
    if not path.is_file():
        return {}
    pairs = (ln.split("\t", 1) for ln in path.read_text(encoding="utf-8").splitlines() if "\t" in ln)
    return {k: v for k, v in pairs}
