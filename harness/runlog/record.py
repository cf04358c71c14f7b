"""The instance record: one line of instances.log, as a type. Both validators of `harness.runlog.reader` (the
per-record one that names the reason and the column-wise fast one) take their fields and rules from here."""

from __future__ import annotations

from typing import TypedDict

from harness.recordings import LongformInfo

__all__ = ["InstanceRecord", "Revision", "REQUIRED_FIELDS", "LATENCY_UNITS", "DELAY_TOLERANCE"]

#: units a record's delays may be counted in
LATENCY_UNITS = ("word", "char", "ms")
#: relative slack for delays at the very end of the source (float ms)
DELAY_TOLERANCE = 1e-6


class Revision(TypedDict):
    """One revision of a re-translation system's hypothesis: when (delay, elapsed) it wrote `text`."""

    delay: float
    elapsed: float
    text: str


class _Required(TypedDict):
    """The fields every record has (SimulEval's own)."""

    index: int  # non-negative, distinct within a log
    prediction: str
    delays: list[float]  # non-negative, non-decreasing, none beyond source_length (within DELAY_TOLERANCE)
    source_length: float  # positive


class InstanceRecord(_Required, total=False):
    """A record of instances.log; a record has `references` (a non-empty object of texts) or `reference`."""

    reference: str
    references: dict[str, str]
    elapsed: list[float]  # as many as delays (or empty: no elapsed times)
    prediction_length: int  # the number of delays
    revisions: list[Revision]
    latency_unit: str  # one of LATENCY_UNITS
    source: str | list[str]
    status: str
    error: str | None
    longform: LongformInfo  # a whole recording of a long-form run (`harness.recordings.longform_info` builds it)


#: the required fields, in the order the validator reports a missing one
REQUIRED_FIELDS: tuple[str, ...] = tuple(_Required.__annotations__)
