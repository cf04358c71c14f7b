"""examples/submissions: real systems made from agent_templates, valid for the demo config, not drifting."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import load_config
from harness.intake.submission import load_submission

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "submissions"
FROM_TEMPLATE = {"baselines-waitk3": "waitk_apertium", "baselines-local-agreement": "local_agreement",
                 "baselines-retranslation": "retranslation"}


def test_at_least_three_examples():
    assert len([p for p in EXAMPLES.iterdir() if p.is_dir()]) >= 3


@pytest.mark.parametrize("name", sorted(FROM_TEMPLATE))
def test_example_is_a_valid_submission_for_the_demo(name):
    sub = load_submission(EXAMPLES / name)
    config = load_config(ROOT / "configs" / "demo.yaml", check_files=False)
    track = config.track(sub.track)
    assert "test" in track.datasets and "dev" in track.datasets
    assert sub.build.dockerfile is not None and sub.command


@pytest.mark.parametrize("name", sorted(FROM_TEMPLATE))
def test_example_files_match_their_template(name):
    template = ROOT / "agent_templates" / FROM_TEMPLATE[name]
    for f in ("Dockerfile", "agent.py"):
        assert (EXAMPLES / name / f).read_bytes() == (template / f).read_bytes(), f"{name}/{f} drifted from {template}"
