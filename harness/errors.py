"""Errors that reach the user as one clear line (never a traceback)."""

from __future__ import annotations


class HarnessError(Exception):
    """A user-facing error. The message names the file, field or request at fault."""


class ConfigError(HarnessError):
    """A task config is invalid: message names the file and the field."""


class LogFormatError(HarnessError):
    """An instances.log cannot be read: message names the file and the line."""


class SubmissionError(HarnessError):
    """A submission folder is invalid: message names the file and the field."""


class MetricSetupError(HarnessError):
    """A metric cannot be computed on this machine (optional extra, checkpoint, GPU or memory missing): the
    organizer's to fix, never a submission's fault, so a batch stops with this line instead of failing runs."""
