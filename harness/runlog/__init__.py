"""The run log (`instances.log`): the one owner of writing and reading it.

- `LogWriter` appends one durable JSON line per finished instance (the server's log writer).
- `read_instances` is the strict reader for scoring: every line validated, errors name the line.
- `read_statuses` / `read_records` / `scan` are the tolerant readers for a log still being written.
Both readers follow one rule for a torn last line (`harness.runlog.torn`).
"""

from harness.runlog.live import LogScan, read_failures, read_records, read_statuses, scan
from harness.runlog.reader import RunLog, read_instances, record_latency_unit, resolve_log_path, validate_record
from harness.runlog.record import InstanceRecord
from harness.runlog.torn import is_torn_tail
from harness.runlog.writer import LogWriter

__all__ = [
    "InstanceRecord",
    "LogScan",
    "LogWriter",
    "RunLog",
    "is_torn_tail",
    "read_failures",
    "read_instances",
    "read_records",
    "read_statuses",
    "record_latency_unit",
    "resolve_log_path",
    "scan",
    "validate_record",
]
