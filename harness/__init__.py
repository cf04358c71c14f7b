"""harness: evaluation harness for simultaneous speech and text translation."""

__version__ = "0.1.0"
