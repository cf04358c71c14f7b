"""Errors that reach the user as one clear line (never a traceback)."""

from __future__ import annotations

#: Exit codes of every `harness` command: the same failure exits the same way everywhere. docs/reference/exit-codes.md
#: is generated from these lines (`NAME = CODE  # meaning`, one line each): python3 -m harness.docs_reference --write
EXIT_OK = 0  # done: the run is ok or partial, the check found no problem
EXIT_FAILED = 1  # done, and what was checked or run failed: a problem found, a run status that is not ok
EXIT_USAGE = 2  # could not start: a bad option, a missing or invalid input file or folder, a port in use (one line)
EXIT_INTERRUPTED = 130  # Ctrl-C, SIGTERM or SIGHUP (runs torn down first)
EXIT_PIPE = 141  # the reader of the output went away (`harness score ... | head`): quiet, as a shell tool


class HarnessError(Exception):
    """A user-facing error. The message names the file, field or request at fault."""


class ConfigError(HarnessError):
    """A task config is invalid: message names the file and the field."""


class LogFormatError(HarnessError):
    """An instances.log cannot be read: message names the file and the line."""


class SubmissionError(HarnessError):
    """A submission folder is invalid: message names the file and the field (the first problem); `problems` holds
    every problem found, one line each (`harness check` prints them all)."""

    def __init__(self, message: str, problems: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems or (message,)


class MetricSetupError(HarnessError):
    """A metric cannot be computed on this machine (optional extra, checkpoint, GPU or memory missing): the
    organizer's to fix, never a submission's fault, so a batch stops with this line instead of failing runs."""
