"""Bootstrap resamples in bounded memory: sacrebleu's seeded index draw, kept as compact counts, used in chunks.

sacrebleu draws `numpy.random.default_rng(seed).choice(n, size=(bootstrap, n))` and sums each resample's sentence
statistics. `Resamples` draws the same indices a block of rows at a time (one generator, so the stream is the
same: a test checks it), keeps only how often each sentence occurs in each resample (uint16 where it fits) and
computes resampled sums `resamples @ values` block by block, so no (bootstrap x n) float matrix is ever built.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Resamples", "resample_counts"]

#: rows per block: a block's temporaries are BLOCK * n * 8 bytes (about 10 MB for 20,000 instances)
BLOCK = 64


class Resamples:
    """(bootstrap, n) occurrence counts of sacrebleu's resamples; `resamples @ values` gives (bootstrap, k) sums."""

    def __init__(self, n: int, bootstrap: int, seed: int) -> None:
        import numpy as np

        self.n, self.bootstrap, self.seed = n, bootstrap, seed
        dtype = np.uint16 if n < (1 << 16) else np.uint32
        self._counts = np.zeros((bootstrap, n), dtype=dtype)
        rng = np.random.default_rng(seed)
        for lo in range(0, bootstrap, BLOCK):
            hi = min(lo + BLOCK, bootstrap)
            idxs = rng.choice(n, size=(hi - lo, n), replace=True)
            for row, drawn in zip(self._counts[lo:hi], idxs, strict=True):  # row by row: its counts stay in cache
                row[:] = np.bincount(drawn, minlength=n)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.bootstrap, self.n)

    def __matmul__(self, values: Any) -> Any:
        """Resampled sums: `values` is (n,) or (n, k); the result (bootstrap,) or (bootstrap, k), float64."""
        import numpy as np

        values = np.asarray(values, dtype=np.float64)
        out = np.empty((self.bootstrap, *values.shape[1:]), dtype=np.float64)
        for lo in range(0, self.bootstrap, BLOCK):
            hi = min(lo + BLOCK, self.bootstrap)
            out[lo:hi] = self._counts[lo:hi].astype(np.float64) @ values
        return out


def resample_counts(n: int, bootstrap: int, seed: int) -> Resamples:
    """sacrebleu's `bootstrap` resamples of `n` sentences with `seed`, as a `Resamples`."""
    return Resamples(n, bootstrap, seed)
