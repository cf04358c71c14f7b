"""bench/portal_bench.py runs: `--quick` (5 teams, a 64 MiB upload, 200 queued) exits 0 and prints each part
with its goal. The figures themselves are the benchmark's business, not a timed test's."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.portal_support import ROOT

pytestmark = [pytest.mark.slow]


def test_the_quick_portal_bench_runs_every_part_and_meets_its_goals() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "portal_bench.py"), "--quick"], capture_output=True,
                          text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    out = proc.stdout
    assert "API: 5 teams, 50 submissions in the database" in out
    assert "GET /api/v1/submissions" in out and "GET /api/v1/me" in out and "goal p99 < 250" in out
    assert "upload: 64 MiB" in out and "(422: not a submission archive)" in out and "goal <= 100 MiB" in out
    assert "MB/s" in out and "ratio upload_client / curl throughput" in out
    assert "scheduling: 200 queued submissions" in out and "first pick (with 200 queued)" in out
    assert "MISSED" not in out and out.rstrip().endswith("all goals met")
