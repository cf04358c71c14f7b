"""Drivers: the harness plays the evaluator's client against a participant that is a server (IWSLT 2023–26).

`harness server --drive INTERFACE --participant HOST:PORT` runs the evaluation server and, beside it, the driver of
that interface: it feeds each source segment to the participant over HTTP, collects its outputs and records them
through the same `Evaluation` as native clients, so delays, CA times, the run log and scores are the same.
"""

from harness.drivers.registry import DRIVERS, drive

__all__ = ["DRIVERS", "drive"]
