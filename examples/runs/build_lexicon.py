"""Translate every distinct whitespace word of a text file with apertium eng-spa, one call: {word: translation}."""

from __future__ import annotations

import json
import subprocess
import sys


def main(src: str, out: str) -> None:
    with open(src, encoding="utf-8") as f:
        words = sorted({w for line in f for w in line.split()})
    # blank lines are paragraph boundaries for apertium: each word is translated on its own
    res = subprocess.run(
        ["apertium", "-u", "eng-spa"], input="\n\n".join(words) + "\n", capture_output=True, text=True, check=True
    )
    translations = [t.strip() for t in res.stdout.rstrip("\n").split("\n\n")]  # "" where apertium drops a word
    if len(translations) != len(words):
        sys.exit(f"apertium returned {len(translations)} lines for {len(words)} words")
    lexicon = {}
    for w, t in zip(words, translations, strict=True):
        if w[:1].islower() and t[:1].isupper():
            t = t[0].lower() + t[1:]
        lexicon[w] = t
    with open(out, "w", encoding="utf-8") as f:
        json.dump(lexicon, f, ensure_ascii=False, indent=0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
