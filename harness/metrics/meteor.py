"""METEOR (Banerjee & Lavie, 2005) with nltk's `meteor_score`, as the 2020 IWSLT evaluation server reported it:
sentence-level scores averaged over the corpus.

- Tokens: each hypothesis and reference is tokenized like BLEU's default (sacrebleu's 13a) and split on spaces;
  nltk lower-cases them.
- Modules: for English targets, exact match, Porter stems and WordNet synonyms (nltk's defaults); for any other
  target, exact match only — an English stemmer or English synonyms on Spanish would match words that differ.
- WordNet is Debian's `wordnet-base` (/usr/share/wordnet), read without any download. The package ships every
  database file but `lexnames`, which nltk's reader needs: it is written once into the harness cache from the
  package's own `lexnames(5WN)` manual page, beside copies of the package's files (nltk 3.10 refuses links).
- Parameters: nltk's defaults, alpha 0.9, beta 3, gamma 0.5; all of it is in the signature.

The per-sentence scores are the statistics (a column of scores and a column of ones), so the bootstrap interval
and the paired tests use the same resamples as every other metric.
"""

from __future__ import annotations

import gzip
import re
import shutil
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.jsonio import atomic_path, write_text_atomic

__all__ = ["WORDNET_DIR", "wordnet", "meteor_sentence_scores", "meteor_signature", "PARAMS"]

WORDNET_DIR = Path("/usr/share/wordnet")
LEXNAMES_MAN = Path("/usr/share/man/man5/lexnames.5WN.gz")
PARAMS = {"alpha": 0.9, "beta": 3.0, "gamma": 0.5}
_CATEGORY = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


def _cache_root() -> Path:
    from harness.cache import cache_dir

    return cache_dir() / "wordnet"


def _lexnames() -> str:
    """nltk's `lexnames` file (number, name, syntactic category), from the manual page of wordnet-base."""
    try:
        text = gzip.decompress(LEXNAMES_MAN.read_bytes()).decode("utf-8", "replace")
    except OSError:
        raise HarnessError(f"METEOR needs WordNet: {LEXNAMES_MAN} is missing (apt-get install wordnet-base)") from None
    rows = []
    for number, name in re.findall(r"^(\d\d)\t(\w+\.\w+)\s*\t", text, flags=re.M):
        rows.append(f"{number}\t{name}\t{_CATEGORY[name.split('.')[0]]}")
    if len(rows) != 45:
        raise HarnessError(f"{LEXNAMES_MAN}: expected the 45 lexicographer files, found {len(rows)}")
    return "\n".join(rows) + "\n"


def _corpus_dir() -> Path:
    """A folder nltk's WordNet reader accepts: copies of wordnet-base's files plus `lexnames`."""
    if not (WORDNET_DIR / "data.noun").is_file():
        raise HarnessError(f"METEOR needs WordNet: {WORDNET_DIR} has no database (apt-get install wordnet-base)")
    root = _cache_root()
    root.mkdir(parents=True, exist_ok=True)
    for f in WORDNET_DIR.iterdir():  # copies (28 MB): nltk refuses symbolic and hard links out of its root
        target = root / f.name
        if f.is_file() and (not target.exists() or target.stat().st_size != f.stat().st_size):
            with atomic_path(target) as partial:
                shutil.copyfile(f, partial)
    lex = root / "lexnames"
    if not lex.is_file():
        write_text_atomic(lex, _lexnames())
    return root


@cache
def wordnet() -> Any:
    """nltk's WordNet reader over Debian's wordnet-base (loaded once per process)."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    root = _corpus_dir()
    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))  # nltk reads corpora only below its data path
    import warnings

    class DebianWordNet(WordNetCorpusReader):
        """No map to nltk's own WordNet 3.0 (for the Open Multilingual Wordnet, unused here): nltk builds it from
        its downloadable corpus whenever the data is not that corpus, and this one is Debian's copy of 3.0."""

        def map_wn(self, version: str = "wordnet") -> None:
            return None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available": none are used
        return DebianWordNet(str(root), None)


class _NoStem:
    """The stemmer of non-English targets: every word is its own stem (exact match only)."""

    @staticmethod
    def stem(word: str) -> str:
        return word


class _NoSynonyms:
    """The WordNet of non-English targets: no synonyms."""

    @staticmethod
    def synsets(word: str) -> list[Any]:
        return []


def _tokens(lines: Sequence[str]) -> list[list[str]]:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    tok = Tokenizer13a()
    return [tok(line.strip()).split() for line in lines]


def meteor_sentence_scores(hypotheses: Sequence[str], references: Sequence[Sequence[str]], target_lang: str
                           ) -> list[float]:
    """nltk's METEOR of every hypothesis against its references (one list per reference set)."""
    try:
        from nltk.stem.porter import PorterStemmer
        from nltk.translate.meteor_score import meteor_score
    except ImportError:
        raise HarnessError("METEOR needs nltk: pip install 'harness[meteor]'") from None

    english = target_lang.split("-")[0].lower() == "en"
    stemmer: Any = PorterStemmer() if english else _NoStem()
    wn: Any = wordnet() if english else _NoSynonyms()
    hyps = _tokens(hypotheses)
    refs = [_tokens(stream) for stream in references]
    return [float(meteor_score([r[i] for r in refs], h, stemmer=stemmer, wordnet=wn, **PARAMS))
            for i, h in enumerate(hyps)]


def meteor_signature(nrefs: int, target_lang: str, bootstrap: int | None = None, seed: int | None = None) -> str:
    """Which modules ran, nltk's version and the parameters, in sacrebleu's signature style."""
    import nltk

    english = target_lang.split("-")[0].lower() == "en"
    modules = "exact+stem+synonym" if english else "exact"
    parts = [f"nrefs:{nrefs}"]
    if bootstrap:
        parts += [f"bs:{bootstrap}", f"seed:{seed}"]
    parts += [f"lang:{target_lang}", f"modules:{modules}", "tok:13a", "case:lc",
              f"alpha:{PARAMS['alpha']:g}", f"beta:{PARAMS['beta']:g}", f"gamma:{PARAMS['gamma']:g}"]
    if english:
        parts.append("wordnet:debian-wordnet-base")
    parts.append(f"nltk:{nltk.__version__}")
    return "|".join(parts)
