"""BLEURT from a checkpoint the organizer names, with PyPI's bleurt-pytorch (the optional extra `bleurt`).

Modules, one job each: `checkpoint` (find and hash a checkpoint folder, no torch), `scorer` (load it offline and
score (reference, candidate) pairs as bleurt-pytorch's README does, batch by batch, through the score cache),
`values` (the metric: system score, signature tag) and `toy` (a small random checkpoint built offline, for tests
and trials). What every neural metric shares (score cache, hash memory, device, scorer memo, signature, interval)
is in `harness.metrics.neural`. Importing this package imports no torch.
"""
