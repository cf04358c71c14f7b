"""Latency metrics of simultaneous translation, per instance, with SimulEval 1.1.4's semantics.

Delays are in source words (text, or characters with the `char` latency unit on the target side) or in
milliseconds of source audio (speech). The target length used for the ideal policy is the reference length by
default (SimulEval's `use_ref_len`). Each function mirrors one scorer of
`simuleval/evaluator/scorers/latency_scorer.py`; SimulEval's known bugs are not copied:

- ATD uses 1-word source and target tokens for text and 300 ms source tokens (0-length text tokens) for speech,
  whether the instances come from memory or from a reloaded log (SimulEval treats every reloaded log as speech);
- computation-aware variants (`NAME_CA`, computed from `elapsed`) never change the plain ones;
- YAAL (Polák et al., 2025) is LAAL over the tokens emitted strictly before the end of the source; an instance
  whose first token comes at or after the end has no YAAL.

Every function takes a non-empty sequence of delays; empty hypotheses are handled by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.metric_registry import LATENCY_METRICS  # the names live in the registry

__all__ = [
    "LATENCY_METRICS",
    "reference_length",
    "average_lagging",
    "length_adaptive_average_lagging",
    "average_proportion",
    "differentiable_average_lagging",
    "average_token_delay",
    "start_offset",
    "end_offset",
    "yet_another_average_lagging",
    "continuous_wait",
    "compute_times_from_elapsed",
    "instance_latency",
    "corpus_latency",
]

SPEECH_SOURCE_TOKEN_MS = 300  # ATD's virtual source token for speech

Number = float | int


def reference_length(reference: str, unit: str = "word") -> int:
    """Target length of the ideal policy: words split on single spaces, or characters (SimulEval's rule)."""
    if unit == "char":
        return len(reference.strip())
    return reference.count(" ") + 1  # == len(reference.split(" "))


def _lagging(delays: Sequence[Number], source_length: Number, gamma: float) -> float:
    if delays[0] > source_length:
        return delays[0]
    total = 0.0
    tau = 0
    for t_minus_1, d in enumerate(delays):
        total += d - t_minus_1 / gamma
        tau = t_minus_1 + 1
        if d >= source_length:
            break
    return total / tau


def average_lagging(delays: Sequence[Number], source_length: Number, target_length: Number) -> float:
    """AL (Ma et al., 2019): mean lag behind the ideal policy up to the first delay that reaches the source end."""
    return _lagging(delays, source_length, target_length / source_length)


def length_adaptive_average_lagging(delays: Sequence[Number], source_length: Number, target_length: Number) -> float:
    """LAAL (Papi et al., 2022): AL with the longer of hypothesis and reference as target length."""
    return _lagging(delays, source_length, max(len(delays), target_length) / source_length)


def average_proportion(delays: Sequence[Number], source_length: Number, target_length: Number) -> float:
    """AP (Cho & Esipova, 2016): sum of delays over |X|·|Y|."""
    return sum(delays) / (source_length * target_length)


def differentiable_average_lagging(delays: Sequence[Number], source_length: Number) -> float:
    """DAL (Arivazhagan et al., 2019), with the hypothesis length as target length."""
    n = len(delays)
    gamma = n / source_length
    total = 0.0
    g_prime_last = 0.0
    for i_minus_1, g in enumerate(delays):
        g_prime = g if i_minus_1 == 0 else max(g, g_prime_last + 1 / gamma)
        total += g_prime - i_minus_1 / gamma
        g_prime_last = g_prime
    return total / n


def start_offset(delays: Sequence[Number]) -> float:
    """Delay of the first target token."""
    return delays[0]


def end_offset(delays: Sequence[Number], source_length: Number) -> float:
    """Delay of the last target token minus the source length."""
    return delays[-1] - source_length


def yet_another_average_lagging(
    delays: Sequence[Number], source_length: Number, target_length: Number, until: Number | None = None
) -> float | None:
    """YAAL (Polák et al., 2025): LAAL over tokens emitted before the source ends; None if there are none.

    `until` moves the end: long-form YAAL (LongYAAL) counts tokens written until the end of the recording, not of
    the sentence.
    """
    end = source_length if until is None else until
    if delays[0] >= end:
        return None
    gamma = max(len(delays), target_length) / source_length
    total = 0.0
    tau = 0
    for t_minus_1, d in enumerate(delays):
        if d >= end:
            break
        total += d - t_minus_1 / gamma
        tau = t_minus_1 + 1
    return total / tau


def continuous_wait(delays: Sequence[Number]) -> float | None:
    """CW (Gu et al., 2017): the mean source read between two consecutive writes of one instance.

    Writes at the same delay are one write; the first wait is counted from the start (0), and only waits that
    read something count (a write right after a write is no wait). None for an empty output or no wait at all.
    """
    waits = []
    previous = 0.0
    for d in delays:
        if d > previous:
            waits.append(d - previous)
            previous = d
    return sum(waits) / len(waits) if waits else None


def compute_times_from_elapsed(delays: Sequence[Number], elapsed: Sequence[Number]) -> list[float]:
    """Per-token computation time for computation-aware ATD: increments of (elapsed - delay)."""
    if all(e == 0 for e in elapsed):
        return [0] * len(delays)
    out: list[float] = []
    prev = 0.0
    for e, d in zip(elapsed, delays, strict=True):
        c = e - d
        out.append(c - prev)
        prev = c
    return out


def _atd_source_times(delays: Sequence[Number], speech: bool) -> list[Number]:
    """End time of the source token each target token is aligned to (ATD's alignment, independent of compute)."""
    # target chunks: runs of equal delays; source chunks: the increments between distinct chunk delays
    chunk_delays: list[Number] = []
    tgt_sizes: list[int] = []
    prev = None
    for d in delays:
        if d != prev:
            chunk_delays.append(d)
            tgt_sizes.append(1)
        else:
            tgt_sizes[-1] += 1
        prev = d
    src_time: list[Number] = [0]
    src_sizes: list[int] = []
    last: Number = 0
    for d in chunk_delays:
        dur = d - last
        last = d
        if speech:
            num, rest = divmod(dur, SPEECH_SOURCE_TOKEN_MS)
            lens: list[Number] = int(num) * [SPEECH_SOURCE_TOKEN_MS] + ([rest] if rest != 0 else [])
        else:
            lens = [1 for _ in range(int(dur))]
        src_sizes.append(len(lens))
        for token_len in lens:
            src_time.append(src_time[-1] + token_len)
    aligned: list[Number] = []
    t = 0
    acc_x = acc_y = 0
    for k, size in enumerate(tgt_sizes):
        cur_src = acc_x + src_sizes[k]
        back = max(0, acc_y - acc_x)
        for _ in range(size):
            t += 1
            s = t - back
            aligned.append(src_time[s if s < cur_src else cur_src])
        acc_x = cur_src
        acc_y += size
    return aligned


def _atd_from_alignment(
    delays: Sequence[Number], aligned: Sequence[Number], speech: bool, compute_times: Sequence[Number] | None
) -> float:
    tgt_len = 0 if speech else 1
    total = 0.0
    tgt_end: Number = 0
    for i, d in enumerate(delays):
        tgt_end = (d if d > tgt_end else tgt_end) + tgt_len + (compute_times[i] if compute_times else 0)
        total += tgt_end - aligned[i]
    return total / len(delays)


def average_token_delay(
    delays: Sequence[Number], speech: bool, compute_times: Sequence[Number] | None = None
) -> float:
    """ATD (Kano et al., 2023) for text output, as SimulEval computes it in memory.

    Text source: source and target tokens last 1 word. Speech source: 300 ms source tokens, 0-length target tokens.
    `compute_times` (see `compute_times_from_elapsed`) gives the computation-aware variant.
    """
    return _atd_from_alignment(delays, _atd_source_times(delays, speech), speech, compute_times)


def instance_latency(
    delays: Sequence[Number],
    source_length: Number,
    target_length: Number,
    speech: bool,
    elapsed: Sequence[Number] | None = None,
) -> dict[str, float | None]:
    """Every latency metric of one non-empty instance; `NAME_CA` too when `elapsed` is given."""
    out: dict[str, float | None] = _plain(delays, source_length, target_length)
    aligned = _atd_source_times(delays, speech)
    out["ATD"] = _atd_from_alignment(delays, aligned, speech, None)
    if elapsed is not None:
        for name, value in _plain(elapsed, source_length, target_length).items():
            out[f"{name}_CA"] = value
        out["ATD_CA"] = _atd_from_alignment(delays, aligned, speech, compute_times_from_elapsed(delays, elapsed))
    return out


def _plain(delays: Sequence[Number], source_length: Number, target_length: Number) -> dict[str, float | None]:
    return {
        "AL": average_lagging(delays, source_length, target_length),
        "LAAL": length_adaptive_average_lagging(delays, source_length, target_length),
        "AP": average_proportion(delays, source_length, target_length),
        "DAL": differentiable_average_lagging(delays, source_length),
        "StartOffset": start_offset(delays),
        "EndOffset": end_offset(delays, source_length),
        "YAAL": yet_another_average_lagging(delays, source_length, target_length),
    }


def _padded(rows: Sequence[Sequence[Number]], lens: Any, width: int) -> Any:
    """(n, width) float matrix of the rows, NaN-padded."""
    from itertools import chain

    import numpy as np

    flat = np.fromiter(chain.from_iterable(rows), dtype=np.float64, count=int(lens.sum()))
    out = np.full((len(rows), width), np.nan)
    r = np.repeat(np.arange(len(rows)), lens)
    c = np.arange(len(flat)) - np.repeat(np.cumsum(lens) - lens, lens)
    out[r, c] = flat
    return out


def _corpus_plain(d: Any, x: Any, y: Any, n: Any) -> dict[str, Any]:
    """AL, LAAL, AP, DAL, StartOffset, EndOffset and YAAL of every row of a padded delay matrix `d`."""
    import numpy as np

    rows, width = d.shape
    col = np.arange(width)[None, :]
    valid = col < n[:, None]
    xs = x[:, None]
    reached = (d >= xs) & valid
    any_reached = reached.any(axis=1)
    first = reached.argmax(axis=1)
    cut = np.where(any_reached, first, n - 1)  # AL/LAAL: up to and including the first delay reaching |X|
    before = np.where(any_reached, first, n)  # YAAL: strictly before it
    out: dict[str, Any] = {}
    for name, gamma in (("AL", y / x), ("LAAL", np.maximum(n, y) / x)):
        terms = d - col / gamma[:, None]
        value = np.where(col <= cut[:, None], terms, 0.0).sum(axis=1) / (cut + 1)
        out[name] = np.where(d[:, 0] > x, d[:, 0], value)
        if name == "LAAL":
            with np.errstate(invalid="ignore", divide="ignore"):
                yaal = np.where(col < before[:, None], terms, 0.0).sum(axis=1) / before
            out["YAAL"] = np.where(before > 0, yaal, np.nan)
    out["AP"] = np.where(valid, d, 0.0).sum(axis=1) / (x * y)
    gamma = n / x
    lag = np.maximum.accumulate(np.where(valid, d - col / gamma[:, None], -np.inf), axis=1)
    out["DAL"] = np.where(valid, lag, 0.0).sum(axis=1) / n
    out["StartOffset"] = d[:, 0]
    out["EndOffset"] = d[np.arange(rows), n - 1] - x
    return out


def _corpus_atd_alignment(d: Any, n: Any, speech: bool) -> Any:
    """Source time each target token is aligned to, for every row of a padded (non-decreasing) delay matrix."""
    import numpy as np

    rows, width = d.shape
    col = np.arange(width)[None, :]
    valid = col < n[:, None]
    prev_col = np.concatenate((np.full((rows, 1), np.nan), d[:, :-1]), axis=1)
    new = valid & ((col == 0) | (d != prev_col))  # first token of each target chunk
    start = np.maximum.accumulate(np.where(new, col, 0), axis=1)  # index of the chunk's first token
    prev_u = np.maximum.accumulate(np.where(new, np.nan_to_num(prev_col, nan=0.0), -np.inf), axis=1)
    # chunks, flattened over rows: source tokens per chunk and times of every source token
    ck_r, ck_c = np.nonzero(new)
    u, pu = d[ck_r, ck_c], prev_u[ck_r, ck_c]
    dur = u - pu
    unit = SPEECH_SOURCE_TOKEN_MS if speech else 1
    if speech:
        num, rest = np.divmod(dur, unit)
        cnt = num.astype(np.int64) + (rest != 0)
    else:
        cnt = dur.astype(np.int64)
    row_first = np.concatenate(([True], ck_r[1:] != ck_r[:-1])) if len(ck_r) else np.zeros(0, dtype=bool)
    csum = np.cumsum(cnt)
    acc_x = csum - cnt - np.repeat((csum - cnt)[row_first], np.diff(np.append(np.flatnonzero(row_first), len(cnt))))
    j = np.arange(int(csum[-1]) if len(csum) else 0) - np.repeat(csum - cnt, cnt) + 1  # 1-based token in chunk
    src_time = np.repeat(pu, cnt) + np.minimum(j * unit, np.repeat(dur, cnt))
    row_tokens = np.bincount(ck_r, weights=cnt, minlength=rows).astype(np.int64)
    row_off = np.cumsum(row_tokens) - row_tokens
    chunk_of = np.cumsum(new, axis=1) - 1 + (np.cumsum(new.sum(axis=1)) - new.sum(axis=1))[:, None]
    chunk_of = np.where(valid, chunk_of, 0)
    ax, cur = acc_x[chunk_of], (acc_x + cnt)[chunk_of]
    s = np.minimum(col + 1 - np.maximum(0, start - ax), cur)
    idx = np.where(valid & (s > 0), row_off[:, None] + s - 1, 0)
    return np.where(s > 0, src_time[idx] if len(src_time) else 0.0, 0.0)


def _corpus_atd(d: Any, n: Any, speech: bool, aligned: Any, compute: Any | None) -> Any:
    """ATD of every row from its alignment (`_corpus_atd_alignment`); `compute` adds per-token computation times."""
    import numpy as np

    valid = np.arange(d.shape[1])[None, :] < n[:, None]
    # token end times: e_i = max(d_i, e_{i-1}) + a_i  =>  e_i = A_i + max(0, max_{k<=i} (d_k - A_{k-1}))
    a = np.where(valid, (0.0 if speech else 1.0) + (compute if compute is not None else 0.0), 0.0)
    acc = np.cumsum(a, axis=1)
    lead = np.where(valid, d - (acc - a), -np.inf)
    end = acc + np.maximum(0.0, np.maximum.accumulate(lead, axis=1))
    return np.where(valid, end - aligned, 0.0).sum(axis=1) / n


def corpus_latency(
    delays: Sequence[Sequence[Number]],
    source_lengths: Sequence[Number],
    target_lengths: Sequence[Number],
    speech: bool,
    elapsed: Sequence[Sequence[Number] | None] | None = None,
) -> dict[str, Any]:
    """Per-instance values of every metric for many non-empty instances at once (numpy arrays, NaN = none).

    Same definitions as `instance_latency` (tests check both against each other and against SimulEval), computed
    on padded matrices. `_CA` arrays are present when `elapsed` is given; rows whose elapsed is None are NaN there.
    """
    import numpy as np

    n = np.fromiter(map(len, delays), dtype=np.int64, count=len(delays))
    x = np.asarray(source_lengths, dtype=np.float64)
    y = np.asarray(target_lengths, dtype=np.float64)
    width = int(n.max()) if len(n) else 1
    d = _padded(delays, n, width)
    out = _corpus_plain(d, x, y, n)
    aligned = _corpus_atd_alignment(d, n, speech)
    out["ATD"] = _corpus_atd(d, n, speech, aligned, None)
    if elapsed is not None:
        has = np.array([e is not None for e in elapsed])
        e = _padded([el if el is not None else dl for el, dl in zip(elapsed, delays, strict=True)], n, width)
        for name, value in _corpus_plain(e, x, y, n).items():
            out[f"{name}_CA"] = np.where(has, value, np.nan)
        ce = np.nan_to_num(e - d)
        compute = ce - np.concatenate((np.zeros((len(n), 1)), ce[:, :-1]), axis=1)
        all_zero = ~np.any((e != 0) & (np.arange(width)[None, :] < n[:, None]), axis=1)
        compute[all_zero] = 0.0
        out["ATD_CA"] = np.where(has, _corpus_atd(d, n, speech, aligned, compute), np.nan)
    return out
