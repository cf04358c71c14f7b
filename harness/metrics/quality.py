"""Quality metrics through sacrebleu: BLEU, chrF and TER with signatures, bootstrap 95% intervals, Norm-Score.

Hypotheses and references are detokenized text. Several reference sets can be scored one by one or together
(multi-reference). Confidence intervals reuse sacrebleu's own resampling recipe: the same seeded
`numpy.random.default_rng(seed).choice` indices over sentence statistics and the metric's own
`_compute_score_from_stats`, with the resampled sums computed once as a matrix product (much faster than
sacrebleu's per-sample copies for 1000 resamples).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from harness.metric_registry import QUALITY_METRICS  # the names live in the registry
from harness.metrics.bootstrap import resample_counts

__all__ = [
    "QUALITY_METRICS", "make_metric", "resample_counts", "QualityStats", "quality_stats", "interval", "quality_score",
    "norm_score",
]



#: how to install what a sacrebleu tokenizer needs (the harness's extras install sacrebleu's)
TOKENIZER_EXTRAS = {"ja-mecab": "pip install 'harness[ja]' (sacrebleu[ja]; scripts/setup.sh installs it)",
                    "ko-mecab": "pip install 'sacrebleu[ko]'"}


def tokenizer_problem(tokenizer: str) -> str | None:
    """Why sacrebleu's BLEU cannot tokenize with `tokenizer` here (an unknown name, or a tokenizer whose modules
    are not installed), in one line; None when it can. Cheap: it builds the tokenizer once, before any work (not
    for 13a and none, which sacrebleu always has and `fast_bleu_stats` applies without importing it)."""
    if tokenizer in _FAST_BLEU_TOKENIZERS:
        return None
    from sacrebleu.metrics import BLEU

    try:
        BLEU(tokenize=tokenizer)
    except KeyError:
        return f"BLEU tokenizer {tokenizer!r} is not one of sacrebleu's ({', '.join(BLEU.TOKENIZERS)})"
    except Exception as exc:  # sacrebleu raises RuntimeError / ImportError for a tokenizer it cannot load
        lines = [x.strip() for x in str(exc).splitlines() if x.strip()]
        reason = lines[0] if lines else type(exc).__name__
        how = TOKENIZER_EXTRAS.get(tokenizer) or next((x for x in lines if x.startswith("pip install")), "")
        return f"BLEU tokenizer {tokenizer!r} is not installed: {reason}" + (f" ({how})" if how else "")
    return None


def make_metric(name: str, tokenizer: str = "13a") -> Any:
    """A fresh sacrebleu metric object; `tokenizer` applies to BLEU and TER (TER: asian support for zh/ja/char)."""
    from sacrebleu.metrics import BLEU, CHRF

    if name == "BLEU":
        return BLEU(tokenize=tokenizer)
    if name == "chrF":
        return CHRF()
    if name == "TER":  # sacrebleu's TER on a faster, equal edit distance (harness.metrics.ter_fast)
        from harness.metrics.ter_fast import FastTER

        return FastTER(asian_support=tokenizer in ("zh", "ja-mecab", "char", "ko-mecab"))
    raise ValueError(f"unknown quality metric {name!r}")


_FAST_BLEU_TOKENIZERS = ("13a", "none")
_ORDER = 4


def _preprocess_13a(line: str) -> str:
    """sacrebleu's BLEU preprocessing + Tokenizer13a up to (not including) its regular expressions, padded."""
    line = line.rstrip().replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    return f" {line} "


# mteval-v13a's rules as sacrebleu's TokenizerRegexp applies them, in order (a test checks they are sacrebleu's)
RULES_13A: tuple[tuple[str, str], ...] = (
    (r"([\{-\~\[-\` -\&\(-\+\:-\@\/])", r" \1 "),
    (r"([^0-9])([\.,])", r"\1 \2 "),
    (r"([\.,])([^0-9])", r" \1 \2"),
    (r"([0-9])(-)", r"\1 \2 "),
)
_CHUNK_CACHE: dict[str, list[str]] = {}
_CHUNK_CACHE_MAX = 1 << 20
_RULES: list[Any] = []
_PAD_TABLE: dict[int, str] = {}


def _tokenize_chunks(chunks: list[str]) -> None:
    """Put the 13a tokens of every whitespace-free chunk into the cache, running each rule once for all of them.

    Chunks are padded with spaces and joined with newlines; no rule can match across such a boundary. The first
    rule only pads single characters of a class with spaces, which `str.translate` does exactly.
    """
    import re

    if not _RULES:
        _RULES.extend((re.compile(pattern), repl) for pattern, repl in RULES_13A)
        first = _RULES[0][0]
        _PAD_TABLE.update({i: f" {chr(i)} " for i in range(128) if first.fullmatch(chr(i))})
    words = [c for c in chunks if c.isalnum()]  # no character any rule looks at
    _CHUNK_CACHE.update((w, [w]) for w in words)
    rest = [c for c in chunks if not c.isalnum()]
    if not rest:
        return
    text = "\n".join(f" {c} " for c in rest).translate(_PAD_TABLE)
    for regex, repl in _RULES[1:]:
        text = regex.sub(repl, text)
    _CHUNK_CACHE.update(zip(rest, (part.split() for part in text.split("\n")), strict=True))


def _chunks_of_lines(lines: Sequence[str], tokenizer: str) -> list[list[str]]:
    """Whitespace-separated chunks of every line after sacrebleu's preprocessing (13a: `_preprocess_13a`).

    The 13a replacements run once over all lines joined by NUL (no replaced string contains NUL, so no match can
    span two lines); lines that contain NUL themselves go one by one.
    """
    stripped = list(map(str.rstrip, lines))
    if tokenizer == "none":
        return list(map(str.split, stripped))
    text = "\0".join(stripped)
    if text.count("\0") != max(len(stripped) - 1, 0):
        return [_preprocess_13a(line).split() for line in lines]
    text = text.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in text:
        text = text.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    return list(map(str.split, text.split("\0")))


def _token_ids(lines: Sequence[str], tokenizer: str) -> tuple[Any, Any, int]:
    """(token ids of all lines concatenated, tokens of each line, vocabulary size), tokenized as sacrebleu's BLEU.

    13a's rules only ever look at two adjacent characters and whitespace behaves in them like the padding space,
    so a line's tokens are the tokens of its whitespace-separated chunks, each tokenized alone (and cached: most
    chunks are words seen before). Python works once per distinct chunk; the per-token arrays are built by numpy.
    Tests check the statistics against sacrebleu on random and real text.
    """
    from itertools import chain

    import numpy as np

    chunked = _chunks_of_lines(lines, tokenizer)
    distinct = list(set(chain.from_iterable(chunked)))
    if tokenizer == "none":
        tokens_of: Any = [[c] for c in distinct]
    else:
        if len(_CHUNK_CACHE) + len(distinct) > _CHUNK_CACHE_MAX:  # bound the memory of long-lived processes
            _CHUNK_CACHE.clear()
        _tokenize_chunks([c for c in distinct if c not in _CHUNK_CACHE])
        tokens_of = map(_CHUNK_CACHE.__getitem__, distinct)
    vocab: dict[str, int] = {}
    chunk_tokens = [[vocab.setdefault(t, len(vocab)) for t in toks] for toks in tokens_of]
    tok_len = np.fromiter(map(len, chunk_tokens), dtype=np.int64, count=len(distinct))
    tok_flat = np.fromiter(chain.from_iterable(chunk_tokens), dtype=np.int64, count=int(tok_len.sum()))
    chunk_no = {c: i for i, c in enumerate(distinct)}
    line_chunks = np.fromiter(map(len, chunked), dtype=np.int64, count=len(chunked))
    cid = np.fromiter(
        map(chunk_no.__getitem__, chain.from_iterable(chunked)), dtype=np.int64, count=int(line_chunks.sum())
    )
    clen = tok_len[cid]
    ccum = np.cumsum(clen)
    total = int(ccum[-1]) if len(ccum) else 0
    ids = tok_flat[np.repeat(np.cumsum(tok_len)[cid] - ccum, clen) + np.arange(total)] if total else tok_flat[:0]
    cum = np.concatenate(([0], ccum))
    bounds = np.concatenate(([0], np.cumsum(line_chunks)))
    return ids, cum[bounds[1:]] - cum[bounds[:-1]], len(vocab)


#: the compiled n-gram matcher (chrf_ngrams.c) takes symbols below 2^22 (every Unicode code point; token ids of a
#: block, whose vocabulary is far smaller)
MAX_NATIVE_ID = 1 << 22
_KEY_LIMIT = 1 << 62  # (sentence, n-gram, stream) keys stay below this; beyond it n-gram ids are renumbered


def _ngram_matches(ids: Any, lens: Any, n: int, nstreams: int, vocab_size: int, max_order: int) -> Any:
    """(n, max_order) clipped n-gram matches of each hypothesis against its references, order 1..max_order.

    `ids` are the token ids (0..vocab_size-1) of all lines concatenated, `lens` the tokens of each line, lines being
    the n hypotheses then each reference stream of n lines. An n-gram's id is its token ids in base |V|+1; each
    (sentence, n-gram, stream) key is counted with one sort; a match is the hypothesis count clipped by the
    largest count in one reference.
    """
    import numpy as np

    out = np.zeros((n, max_order), dtype=np.int64)
    if not len(ids):
        return out
    line = np.repeat(np.arange(len(lens)), lens)
    sent_stream = (line % n) * nstreams + line // n  # sentence-major, then stream (0: hypothesis)
    left = np.repeat(np.cumsum(lens), lens) - np.arange(len(ids))  # tokens from each position to its line's end
    base = vocab_size + 1
    tok = ids + 1
    gram, width = tok.copy(), base  # id of the n-gram starting at each position, ids in [0, width)
    for order in range(1, max_order + 1):
        if order > 1:
            if width * base * n * nstreams >= _KEY_LIMIT:  # renumber the (n-1)-grams densely first
                uniq, gram = np.unique(gram, return_inverse=True)
                gram, width = gram.reshape(-1), len(uniq)
            gram = gram * base
            gram[: len(ids) - order + 1] += tok[order - 1 :]
            width *= base
        valid = left >= order
        ss = sent_stream[valid]
        key = (ss // nstreams * width + gram[valid]) * nstreams + ss % nstreams
        if not len(key):
            break
        key.sort()
        first = np.empty(len(key), dtype=bool)
        first[0] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        uk = key[starts]
        uc = np.diff(np.append(starts, len(key)))
        pair_key = uk // nstreams  # (sentence, n-gram)
        if nstreams == 2:  # the hypothesis count and the reference count are neighbours
            both = pair_key[1:] == pair_key[:-1]
            match = np.minimum(uc[:-1], uc[1:])[both]
            owner = pair_key[:-1][both] // width
        else:
            src = uk % nstreams
            group = np.flatnonzero(np.concatenate(([True], pair_key[1:] != pair_key[:-1])))
            hyp_c = np.add.reduceat(np.where(src == 0, uc, 0), group)
            ref_c = np.maximum.reduceat(np.where(src > 0, uc, 0), group)
            match = np.minimum(hyp_c, ref_c)
            owner = pair_key[group] // width
        out[:, order - 1] = np.bincount(owner, weights=match, minlength=n)[:n].astype(np.int64)
    return out


#: characters (hypotheses + references) per block of sentences in the vectorized statistics: their numpy work
#: arrays take ~100 bytes per character, so a block stays near 100 MB whatever the corpus size
BLOCK_CHARS = 1 << 20


def _blocks(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> list[tuple[int, int]]:
    """Sentence ranges [a, b) whose hypothesis and reference text together stay near BLOCK_CHARS characters."""
    bounds, start, size = [], 0, 0
    chars = list(map(len, hypotheses))
    for refs in references:
        chars = list(map(operator.add, chars, map(len, refs)))
    for i, n in enumerate(chars):
        size += n
        if size >= BLOCK_CHARS:
            bounds.append((start, i + 1))
            start, size = i + 1, 0
    if start < len(hypotheses) or not bounds:
        bounds.append((start, len(hypotheses)))
    return bounds


def _by_blocks(fn: Any, hypotheses: Sequence[str], references: Sequence[Sequence[str]], *args: Any) -> Any:
    """`fn(hyps, refs, *args)` (per-sentence statistics) run block by block and stacked: bounded memory."""
    import numpy as np

    parts = [fn(hypotheses[a:b], [r[a:b] for r in references], *args) for a, b in _blocks(hypotheses, references)]
    if any(p is None for p in parts):
        return None
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def fast_bleu_stats(hypotheses: Sequence[str], references: Sequence[Sequence[str]], tokenizer: str) -> Any:
    """`_fast_bleu_stats` block by block (bounded memory)."""
    if tokenizer not in _FAST_BLEU_TOKENIZERS:
        return None
    return _by_blocks(_fast_bleu_stats, hypotheses, references, tokenizer)


def _fast_bleu_stats(hypotheses: Sequence[str], references: Sequence[Sequence[str]], tokenizer: str) -> Any:
    """sacrebleu's BLEU sentence statistics `[hyp_len, ref_len, correct_1..4, total_1..4]` as an (n, 10) array.

    Vectorized with numpy: an n-gram's id is its token ids in base |V|+1, each (sentence, n-gram, stream) key is
    counted with one sort, reference counts are clipped by their maximum over references and the reference length
    is the closest one (the shorter on ties), exactly as sacrebleu computes them. Only for the `13a` and `none`
    tokenizers (None otherwise).
    """
    import numpy as np

    if tokenizer not in _FAST_BLEU_TOKENIZERS:
        return None
    n = len(hypotheses)
    nstreams = 1 + len(references)
    ids, lens, vocab_size = _token_ids([line for s in [hypotheses, *references] for line in s], tokenizer)
    stats = np.zeros((n, 2 + 2 * _ORDER), dtype=np.int64)
    hyp_lens = lens[:n]
    stats[:, 0] = hyp_lens
    # closest reference length, the shorter one on ties
    best_len = lens[n : 2 * n].copy()
    for r in range(1, len(references)):
        cand = lens[(r + 1) * n : (r + 2) * n]
        d_new, d_old = np.abs(hyp_lens - cand), np.abs(hyp_lens - best_len)
        best_len = np.where((d_new < d_old) | ((d_new == d_old) & (cand < best_len)), cand, best_len)
    stats[:, 1] = best_len
    for order in range(1, _ORDER + 1):
        stats[:, 1 + _ORDER + order] = np.maximum(hyp_lens - order + 1, 0)
    matches = None
    if nstreams == 2 and vocab_size < MAX_NATIVE_ID:  # one reference: chrF's compiled clipped n-gram matches
        from harness.metrics.native import chrf_match_counts

        matches = chrf_match_counts(ids, lens, n, _ORDER)  # on token ids instead of characters
    stats[:, 2 : 2 + _ORDER] = (matches if matches is not None
                                else _ngram_matches(ids, lens, n, nstreams, vocab_size, _ORDER))
    return stats


CHRF_CHAR_ORDER = 6


def fast_chrf_stats(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> Any:
    """`_fast_chrf_stats` block by block (bounded memory)."""
    if len(references) != 1:
        return None
    return _by_blocks(_fast_chrf_stats, hypotheses, references)


def _fast_chrf_stats(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> Any:
    """sacrebleu's default chrF sentence statistics (`[hyp, ref, match]` for character orders 1..6), (n, 18) array.

    Whitespace is removed as sacrebleu does (`"".join(line.split())`); characters become dense ids and the n-gram
    matches are counted as for BLEU. Single reference only (sacrebleu picks the best of several per sentence by
    F-score): None for several references.
    """
    import numpy as np

    if len(references) != 1:
        return None
    n = len(hypotheses)
    lines = list(map("".join, map(str.split, [*hypotheses, *references[0]])))
    lens = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines))
    codes = np.frombuffer("".join(lines).encode("utf-32-le"), dtype=np.uint32)
    from harness.metrics.native import chrf_match_counts

    matches = chrf_match_counts(codes, lens, n, CHRF_CHAR_ORDER)  # compiled; else the numpy sort path
    if matches is None:
        chars, ids = np.unique(codes, return_inverse=True)
        matches = _ngram_matches(ids.reshape(-1).astype(np.int64), lens, n, 2, len(chars), CHRF_CHAR_ORDER)
    orders = np.arange(1, CHRF_CHAR_ORDER + 1)[None, :]
    ref_count = np.maximum(lens[n:, None] - orders + 1, 0)
    hyp_count = np.where(ref_count > 0, np.maximum(lens[:n, None] - orders + 1, 0), 0)
    return np.stack((hyp_count, ref_count, matches), axis=2).reshape(n, 3 * CHRF_CHAR_ORDER)


PARALLEL_MIN_SENTENCES = 256


def _stats_chunk(name: str, tokenizer: str, hyps: list[str], refs: list[list[str]]) -> list[Any]:
    return make_metric(name, tokenizer)._extract_corpus_statistics(hyps, refs)


def sentence_stats(metric: Any, name: str, tokenizer: str, hyps: list[str], refs: list[list[str]]) -> list[Any]:
    """sacrebleu's sentence statistics, computed in worker processes (one chunk per core) for large corpora
    (TER with the compiled library in this process)."""
    import os

    from harness.metrics.native import library

    workers = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8)
    compiled = name == "TER" and library() is not None  # one C call for all sentences: no worker processes
    if compiled or workers < 2 or len(hyps) < PARALLEL_MIN_SENTENCES:
        return metric._extract_corpus_statistics(hyps, refs)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    metric.num_refs = len(refs)  # what reference caching would set, for the signature
    bounds = [len(hyps) * i // workers for i in range(workers + 1)]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        parts = pool.map(
            _stats_chunk,
            [name] * workers,
            [tokenizer] * workers,
            [hyps[a:b] for a, b in zip(bounds, bounds[1:])],  # noqa: B905 (shifted copy)
            [[r[a:b] for r in refs] for a, b in zip(bounds, bounds[1:])],  # noqa: B905
        )
        return [row for part in parts for row in part]


def bleu_from_stats(stats: Sequence[float]) -> float:
    """sacrebleu's corpus BLEU (4-grams, `exp` smoothing, no effective order) from summed sentence statistics."""
    import math

    sys_len, ref_len = stats[0], stats[1]
    correct, total = stats[2 : 2 + _ORDER], stats[2 + _ORDER :]
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    if not any(correct):
        return 0.0
    precisions = [0.0] * _ORDER
    smooth = 1.0
    for n in range(_ORDER):
        if total[n] == 0:
            break
        if correct[n] == 0:
            smooth *= 2
            precisions[n] = 100.0 / (smooth * total[n])
        else:
            precisions[n] = 100.0 * correct[n] / total[n]
    return bp * math.exp(sum(math.log(p) if p != 0.0 else -9999999999 for p in precisions) / _ORDER)


def bleu_signature(nrefs: int, tokenizer: str, bootstrap: int | None = None, seed: int | None = None) -> str:
    """sacrebleu's BLEU signature for the default BLEU settings (a test checks it equals sacrebleu's own)."""
    bs = f"bs:{bootstrap}|seed:{seed}|" if bootstrap else ""
    return f"nrefs:{nrefs}|{bs}case:mixed|eff:no|tok:{tokenizer}|smooth:exp|version:{_sacrebleu_version()}"


def _sacrebleu_version() -> str:
    """sacrebleu.__version__ without importing sacrebleu (its version.py, else the installed metadata)."""
    import importlib.util
    import re
    from pathlib import Path

    spec = importlib.util.find_spec("sacrebleu")
    if spec is not None and spec.origin:
        path = Path(spec.origin).with_name("version.py")
        if path.is_file():
            text = path.read_text(encoding="utf-8")  # e.g. `__version__ = version = '2.6.0'` (setuptools-scm)
            m = re.search(r"""^__version__\s*=\s*(?:version\s*=\s*)?['"]([^'"]+)['"]""", text, re.M)
            if m:
                return m.group(1)
    from importlib.metadata import version

    return version("sacrebleu")


def _ci95(values: Sequence[float]) -> list[float]:
    """sacrebleu's percentile rule: the n//40-th lowest and highest of the sorted resampled scores."""
    raw = sorted(values)
    lo = len(raw) // 40
    return [float(raw[lo]), float(raw[len(raw) - lo - 1])]


class QualityStats:
    """One corpus metric's per-sentence statistics (possibly still being computed) and how to score them.

    `stats()` gives the (n, k) float64 matrix (waiting for a background computation); `value()` the corpus score
    exactly as sacrebleu computes it from the statistics; `score(sums)` the metric of one row of summed statistics
    (a bootstrap resample); `signature(bootstrap, seed)` sacrebleu's signature.
    """

    def __init__(self, raw: Callable[[], Any], value: Callable[[Any], float],
                 score: Callable[[Sequence[float]], float], signature: Callable[[int | None, int | None], str]) -> None:
        self._raw_fn = raw
        self._raw: Any = None
        self._matrix: Any = None
        self._value, self.score, self.signature = value, score, signature

    def raw(self) -> Any:
        """The statistics as the metric computed them (a list of lists or an integer array)."""
        if self._raw is None:
            self._raw = self._raw_fn()
        return self._raw

    def stats(self) -> Any:
        if self._matrix is None:
            import numpy as np

            self._matrix = np.asarray(self.raw(), dtype=np.float64)
        return self._matrix

    def value(self) -> float:
        return self._value(self.raw())


def quality_stats(name: str, hypotheses: Sequence[str], references: Sequence[Sequence[str]], *,
                  tokenizer: str = "13a", target_lang: str = "en") -> QualityStats:
    """Start one corpus metric (TER runs in the background with the C library): a `QualityStats`."""
    if name == "METEOR":
        return _meteor_stats(hypotheses, references, target_lang)
    if name == "BLEU":
        fast = fast_bleu_stats(hypotheses, references, tokenizer)
        if fast is not None:  # BLEU without sacrebleu's per-sentence Python work (or its import)
            return QualityStats(
                lambda: fast, lambda raw: bleu_from_stats(raw.sum(axis=0).tolist()), bleu_from_stats,
                lambda bs, seed: bleu_signature(len(references), tokenizer, bs, seed),
            )
    metric = make_metric(name, tokenizer)
    hyps, refs = list(hypotheses), [list(r) for r in references]
    if name == "chrF":
        fast = fast_chrf_stats(hypotheses, references)
        metric.num_refs = len(references)  # what reference caching would set, for the signature
        get = (lambda: fast.tolist()) if fast is not None else (
            lambda: sentence_stats(metric, name, tokenizer, hyps, refs))
    elif name == "TER" and hasattr(metric, "start_corpus_statistics"):
        get = metric.start_corpus_statistics(hyps, refs)
    else:
        get = lambda: sentence_stats(metric, name, tokenizer, hyps, refs)  # noqa: E731

    def signature(bootstrap: int | None, seed: int | None) -> str:
        if bootstrap:
            metric.n_bootstrap, metric.seed = bootstrap, str(seed)
        return metric.get_signature().format()

    return QualityStats(
        get, lambda raw: float(metric._aggregate_and_compute(raw).score),
        lambda row: float(metric._compute_score_from_stats(list(row)).score), signature,
    )


def _meteor_stats(hypotheses: Sequence[str], references: Sequence[Sequence[str]], target_lang: str) -> QualityStats:
    """METEOR's statistics: each sentence's score and a 1 (so a resample's score is the mean of its sentences)."""
    from harness.metrics.meteor import meteor_sentence_scores, meteor_signature

    def raw() -> list[list[float]]:
        return [[v, 1.0] for v in meteor_sentence_scores(hypotheses, references, target_lang)]

    def mean(row: Sequence[float]) -> float:
        return float(row[0] / row[1]) if row[1] else 0.0

    return QualityStats(raw, lambda stats: mean([math.fsum(r[0] for r in stats), float(len(stats))]), mean,
                        lambda bs, seed: meteor_signature(len(references), target_lang, bs, seed))


def interval(scores: Sequence[float]) -> list[float]:
    """sacrebleu's 95% interval of resampled scores (its percentile rule)."""
    return _ci95(scores)


def quality_score(
    name: str,
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    tokenizer: str = "13a",
    counts: Any = None,
    seed: int = 12345,
) -> dict[str, Any]:
    """One corpus metric: `{"score", "ci95", "signature"}`. `references` is a list of reference streams.

    `counts` (from `resample_counts`) turns on the bootstrap interval; pass the same matrix to every metric so that
    all intervals come from the same resamples.
    """
    q = quality_stats(name, hypotheses, references, tokenizer=tokenizer)
    value = q.value()
    ci = None
    if counts is not None and len(q.stats()) > 0:
        ci = _ci95([q.score(row) for row in (counts @ q.stats()).tolist()])
    return {"score": value, "ci95": ci, "signature": q.signature(counts.shape[0] if ci is not None else None, seed)}


def norm_score(system_bleu: float, baseline_bleu: float) -> float | None:
    """Norm-Score (SiMuST-C): system BLEU over the offline baseline's BLEU on the same references."""
    return system_bleu / baseline_bleu if baseline_bleu else None
