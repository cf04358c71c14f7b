"""Neural quality metrics (COMET, XCOMET) from a checkpoint the organizer names, with unbabel-comet 2.2.7.

Modules, one job each: `checkpoint` (find and hash a checkpoint on disk), `runtime` (the optional extra, offline
loading and precision), `scorer` (comet-score's batches, shared source and reference embeddings), `values` (the
metric: system score, signature tag) and `toy` (a small checkpoint built offline from a local encoder, for tests
and trials). What every neural metric shares (score cache, hash memory, device, scorer memo, signature, interval)
is in `harness.metrics.neural`. Importing this package imports no torch.
"""
