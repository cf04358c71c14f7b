"""Paths of the IWSLT 2026 mini-campaign, for its tests (tests/test_iwslt2026_campaign.py,
tests/test_iwslt2026_campaign_docker.py; not a test module; imported as `tests.iwslt2026_support`)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUBMISSIONS = ROOT / "examples" / "iwslt2026" / "submissions"
TEMPLATES = ROOT / "agent_templates"
SCRIPT = ROOT / "scripts" / "iwslt2026.sh"
