"""BLEURT from a checkpoint the organizer names, with PyPI's bleurt-pytorch (the optional extra `bleurt`).

Modules, one job each: `checkpoint` (find and hash a checkpoint folder, no torch), `scorer` (load it offline and
score (reference, candidate) pairs as bleurt-pytorch's README does, batch by batch, through the score cache),
`values` (the metric: system score, signature, interval) and `toy` (a small random checkpoint built offline, for
tests and trials). Importing this package imports no torch.
"""
