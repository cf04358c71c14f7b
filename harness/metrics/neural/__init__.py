"""What the neural quality metrics (COMET, XCOMET, BLEURT) share; each metric's package keeps only what differs.

Modules, one job each: `cache` (sentence scores on disk by model, batch and item digest, and the cached batch
step), `checkpoint` (a checkpoint's content hash, remembered by path, size and modification time), `runtime` (the
optional extra, offline loading, device choice, the out-of-memory line and the process's scorer memo) and `values`
(a system's values: model signature, metric signature, bootstrap interval). Importing this package imports no torch.
"""
