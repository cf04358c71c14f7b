"""The containers' own deadlines (Docker backend): nothing outlives its budget when the harness is gone.

The harness's watchdog (`watch.watch`) enforces the timeouts while it lives; a harness killed with SIGKILL (or a
host process that dies) enforces nothing, so both containers carry a deadline of their own. The server runs under
coreutils `timeout` (the harness image has it) and ends `server_deadline_s` after it starts; the participant's
command runs under a POSIX-shell watchdog (`WATCHDOG`) that SIGKILLs it `participant_deadline_s` after it starts
(`timeout` cannot be assumed in a submission image, a shell can: string commands run under /bin/sh anyway). An argv
command in an image without /bin/sh runs unwrapped: it loses its server at the server's deadline and is removed at
the next start. The network, which runs nothing, stays until the next start removes it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from harness.config import Limits
from harness.run.watch import SERVER_READY_TIMEOUT_S

#: Seconds a container may outlive the harness's own deadline for it before it ends itself.
DEADLINE_GRACE_S = 10.0
#: The participant's watchdog: `sh -c WATCHDOG harness-deadline SECONDS ARGV...` runs ARGV and SIGKILLs it after
#: SECONDS; the container ends with the shell (its PID 1), which exits with ARGV's status (137 when killed).
WATCHDOG = 'd=$1; shift; "$@" & c=$!; (sleep "$d"; kill -KILL "$c") >/dev/null 2>&1 & wait "$c"'
#: Seconds between `timeout`'s TERM and its KILL of the server.
SERVER_KILL_AFTER_S = 5


def participant_deadline_s(limits: Limits) -> float:
    """Seconds after its start at which the participant container kills its own command."""
    return limits.total_timeout_s + DEADLINE_GRACE_S


def server_deadline_s(limits: Limits) -> float:
    """Seconds after its start at which the server container ends itself: the participant starts at most the
    health-probe wait after the server, and the harness collects its results within the grace after that."""
    return SERVER_READY_TIMEOUT_S + DEADLINE_GRACE_S + participant_deadline_s(limits) + DEADLINE_GRACE_S


def under_watchdog(argv: Sequence[str], limits: Limits) -> list[str]:
    """The participant's argv run by the shell watchdog, killed at `participant_deadline_s`."""
    return ["/bin/sh", "-c", WATCHDOG, "harness-deadline", str(math.ceil(participant_deadline_s(limits))), *argv]


def under_timeout(argv: Sequence[str], limits: Limits) -> list[str]:
    """The server's argv under coreutils `timeout`, ending at `server_deadline_s`."""
    return ["timeout", "-k", str(SERVER_KILL_AFTER_S), str(math.ceil(server_deadline_s(limits))), *argv]
