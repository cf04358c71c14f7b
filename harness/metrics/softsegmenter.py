"""SoftSegmenter: assign each word of a recording's output stream to one reference sentence.

The algorithm of Polák et al. 2025 ("Better Late Than Never", arXiv:2509.17349), with OmniSTEval 0.1.10's exact
choices, so that every resegmented sentence — and every metric computed on it — equals OmniSTEval's:

- words are NFKC-normalised and lower-cased (references too), optionally split by the Moses tokenizer into
  sub-tokens of which only the first carries the word;
- the alignment maximises the summed similarity of matched pairs with free insertions and deletions; similarity is
  the Jaccard index of the two words' character sets (exact match at character level), minus infinity when one of
  the two is punctuation and the other is not; ties prefer match, then deletion, then insertion;
- an output word left unmatched goes to the nearer of the previous and the next matched reference word, by
  similarity (the previous one on a tie).

OmniSTEval fills the dynamic-programming table in pure Python, one cell at a time, and keeps it as lists of objects
(hours and tens of GiB for a 2.5-hour talk). Here one row is a handful of numpy operations: with
`A[j] = max(match[j], delete[j])`, the row is the running maximum of `A` (insertions are free), and the decision
of each cell is read off the same vectors. The additions are the same IEEE operations as OmniSTEval's, so ties fall
the same way. The backpointers are two bit planes (`n·m/4` bytes), not a table of enum objects.
"""

from __future__ import annotations

import logging
import os
import threading
import unicodedata
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["PUNCTUATION", "normalise", "align_stream"]

PUNCTUATION = frozenset(
    [".", "!", "?", ",", ";", ":", "-", "(", ")"]
    + ["。", "！", "？", "，", "；", "：", "—", "（", "）"]
    + ["ー"]
)

_NEG_INF = float("-inf")
_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


def _popcount_rows(masks: np.ndarray) -> np.ndarray:
    """Set bits per row of a (n, k) uint64 array (numpy's `bitwise_count` where it exists, else a byte table)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(masks).sum(axis=1, dtype=np.int64)
    as_bytes = np.ascontiguousarray(masks).view(np.uint8).reshape(masks.shape[0], -1)
    return _BYTE_BITS[as_bytes].sum(axis=1)


def normalise(word: str) -> str:
    """The form words are compared in: NFKC, lower case."""
    return unicodedata.normalize("NFKC", word).lower()


def _moses(lang: str | None) -> Callable[[str], list[str]]:
    """The sub-word splitter: none for `None`, zh and ja; else the Moses tokenizer of `lang` (as OmniSTEval), one
    per language and process, shared by every recording scored there."""
    if lang is None or lang in ("zh", "ja"):
        return lambda text: [text]
    key = (lang, os.getpid())  # a forked child starts its own: the parent's pipe is not the child's to share
    with _SPLITTERS_LOCK:
        split = _SPLITTERS.get(key)
        if split is None:
            split = _SPLITTERS[key] = _memoised_moses(lang)
    return split


_SPLITTERS: dict[tuple[str, int], Callable[[str], list[str]]] = {}
_SPLITTERS_LOCK = threading.Lock()
#: distinct words a splitter remembers before it forgets them all (a talk's vocabulary is a few thousand)
MEMO_WORDS = 200_000


def _memoised_moses(lang: str) -> Callable[[str], list[str]]:
    """The Moses tokenizer of `lang` on one word at a time, each distinct word asked once.

    The tokenizer is a Perl process that reads and answers a line at a time, and a word's tokens depend on that
    word alone: remembering them gives the same tokens without a round trip per word. One caller at a time talks
    to the process (scoring runs recordings in threads)."""
    from mosestokenizer import MosesTokenizer  # the same Perl tokenizer OmniSTEval drives

    # its wrapper logs every Perl process it starts at INFO, which mweralign's import turns on for the root logger
    logging.getLogger("mosestokenizer").setLevel(logging.WARNING)
    tokenizer = MosesTokenizer(lang=lang, no_escape=True)
    memo: dict[str, list[str]] = {}
    lock = threading.Lock()

    def split(word: str) -> list[str]:
        tokens = memo.get(word)
        if tokens is None:
            with lock:
                if len(memo) >= MEMO_WORDS:
                    memo.clear()
                tokens = memo[word] = list(tokenizer(word))
        return tokens

    return split


class _Tokens:
    """Tokens of one side: text, owning word, whether it is the word's first token, and char-set bitmasks."""

    def __init__(self, words: Sequence[str], split: Callable[[str], list[str]]):
        self.text: list[str] = []
        self.word: list[int] = []
        self.main: list[bool] = []
        for w, word in enumerate(words):
            for k, token in enumerate(split(normalise(word))):
                self.text.append(token)
                self.word.append(w)
                self.main.append(k == 0)
        self.punct = np.fromiter((t in PUNCTUATION for t in self.text), dtype=bool, count=len(self.text))


def _char_masks(sides: Sequence[Sequence[str]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per list of words: (the bits of each word's character set as uint64 words (n, k), set sizes (n,))."""
    alphabet: dict[str, int] = {}
    for side in sides:
        for t in side:
            for ch in t:
                alphabet.setdefault(ch, len(alphabet))
    k = max(1, (len(alphabet) + 63) // 64)
    out = []
    for side in sides:
        masks = np.zeros((len(side), k), dtype=np.uint64)
        for i, t in enumerate(side):
            for ch in set(t):
                b = alphabet[ch]
                masks[i, b >> 6] |= np.uint64(1 << (b & 63))
        sizes = _popcount_rows(masks)
        out.append((masks, sizes))
    return out


class _Similarity:
    """Row `i` of the similarity matrix between reference token i and every output token.

    Rows are computed once per distinct reference token against the distinct output tokens, then gathered: a talk
    repeats its words, so most rows are a cache hit and an index operation.
    """

    CACHE_BYTES = 256 << 20

    def __init__(self, ref: _Tokens, hyp: _Tokens, char_level: bool):
        self.ref, self.hyp, self.char_level = ref, hyp, char_level
        types: dict[str, int] = {}
        self.hyp_type = np.array([types.setdefault(t, len(types)) for t in hyp.text], dtype=np.intp)
        self.types = list(types)
        self.type_punct = np.fromiter((t in PUNCTUATION for t in self.types), dtype=bool, count=len(self.types))
        if not char_level:
            ref_types = sorted(set(ref.text))
            (masks, sizes), (self.type_masks, self.type_sizes) = _char_masks((ref_types, self.types))
            self.ref_masks = {t: (masks[i], sizes[i]) for i, t in enumerate(ref_types)}
        self.cache: dict[str, np.ndarray] = {}
        self.cache_limit = max(1, self.CACHE_BYTES // (8 * max(1, len(self.types))))

    def _type_row(self, token: str) -> np.ndarray:
        """Similarity of `token` (a reference token) to every distinct output token."""
        if self.char_level:
            sim = np.fromiter((t == token for t in self.types), dtype=bool, count=len(self.types)).astype(np.float64)
        else:
            mask, size = self.ref_masks[token]
            inter = _popcount_rows(self.type_masks & mask)
            union = size + self.type_sizes - inter
            sim = np.where(union > 0, inter / np.maximum(union, 1), 0.0)
        sim[self.type_punct != (token in PUNCTUATION)] = _NEG_INF
        return sim

    def row(self, i: int) -> np.ndarray:
        token = self.ref.text[i]
        sim = self.cache.get(token)
        if sim is None:
            sim = self._type_row(token)
            if len(self.cache) < self.cache_limit:
                self.cache[token] = sim
        return sim[self.hyp_type]

    def one(self, i: int, j: int) -> float:
        r, h = self.ref.text[i], self.hyp.text[j]
        if (r in PUNCTUATION) != (h in PUNCTUATION):
            return _NEG_INF
        if self.char_level:
            return float(r == h)
        a, b = set(r), set(h)
        inter = len(a & b)
        union = len(a) + len(b) - inter
        return inter / union if union else 0.0


def _align(sim: _Similarity, n: int, m: int) -> list[tuple[int | None, int | None]]:
    """The optimal alignment as (ref token or None, output token or None) pairs, in order."""
    is_match = np.zeros((n + 1, (m + 8) // 8), dtype=np.uint8)
    is_delete = np.zeros((n + 1, (m + 8) // 8), dtype=np.uint8)
    prev = np.zeros(m + 1)
    row = np.empty(m + 1)
    for i in range(1, n + 1):
        match = prev[:-1] + sim.row(i - 1)
        delete = prev[1:]
        a = np.maximum(match, delete)
        row[0] = 0.0
        np.maximum.accumulate(np.concatenate(([0.0], a)), out=row)
        insert = row[:-1]
        m_ok = (match >= delete) & (match >= insert)
        d_ok = ~m_ok & (delete >= insert)
        is_match[i] = np.packbits(np.concatenate(([False], m_ok)))
        is_delete[i] = np.packbits(np.concatenate(([True], d_ok)))
        prev, row = row, prev
    pairs: list[tuple[int | None, int | None]] = []
    i, j = n, m
    while i > 0 or j > 0:
        byte, bit = j >> 3, 0x80 >> (j & 7)
        if i == 0:
            op = "I" if j > 0 else "M"
        elif is_match[i, byte] & bit:
            op = "M"
        elif is_delete[i, byte] & bit:
            op = "D"
        else:
            op = "I"
        if op == "M":
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif op == "D":
            pairs.append((i - 1, None))
            i -= 1
        else:
            pairs.append((None, j - 1))
            j -= 1
    pairs.reverse()
    return pairs


def _assign(pairs: list[tuple[int | None, int | None]], sim: _Similarity, ref_sentence: Sequence[int]
            ) -> list[int | None]:
    """Reference token (index) each output token is attached to, or None (OmniSTEval's `process_alignment`)."""
    out: list[int | None] = [None] * len(sim.hyp.text)

    def next_ref(k: int) -> tuple[int, int | None]:
        while k < len(pairs) and pairs[k][0] is None:
            k += 1
        return (k, None) if k == len(pairs) else (k, pairs[k][0])

    last: int | None = None
    next_k = 0
    lookahead: int | None = None
    for k, (ref, hyp) in enumerate(pairs):
        if ref is None and k >= next_k:
            if hyp is not None:
                next_k, nxt = next_ref(k)
                next_score = sim.one(nxt, hyp) if nxt is not None else _NEG_INF
                prev_score = sim.one(last, hyp) if last is not None else _NEG_INF
                if next_score > prev_score:
                    ref, lookahead = nxt, nxt
                else:
                    ref, next_k, lookahead = last, k, None
        elif ref is None and hyp is not None:
            ref = lookahead
        if ref is not None and k >= next_k:
            last = ref
        if hyp is not None and ref is not None:
            out[hyp] = ref
    return out


def align_stream(
    references: Sequence[str],
    output_words: Sequence[str],
    *,
    char_level: bool = False,
    lang: str | None = None,
) -> list[int | None]:
    """For each output word (or character at `char_level`), the index of its reference sentence, or None.

    `references` are one recording's reference sentences in order; `output_words` its output stream split into
    units. A unit with None belongs to no sentence (OmniSTEval drops it too: a punctuation unit before the first
    matched reference word).
    """
    split = _moses(lang)
    ref_units: list[str] = []
    sentence_of: list[int] = []
    for s, sentence in enumerate(references):
        text = sentence.strip().lower()
        units = list(text.replace(" ", "")) if char_level else text.split()
        ref_units.extend(units)
        sentence_of.extend([s] * len(units))
    ref = _Tokens(ref_units, split)
    hyp = _Tokens(output_words, split)
    if not hyp.text:
        return [None] * len(output_words)
    if not ref.text:
        raise ValueError("a recording with output but no reference words cannot be aligned")
    sim = _Similarity(ref, hyp, char_level)
    pairs = _align(sim, len(ref.text), len(hyp.text))
    attached = _assign(pairs, sim, sentence_of)
    result: list[int | None] = [None] * len(output_words)
    for t, r in enumerate(attached):
        if hyp.main[t]:
            result[hyp.word[t]] = None if r is None else sentence_of[ref.word[r]]
    return result
