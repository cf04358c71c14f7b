"""The IWSLT 2026 mini-campaign (issue 24, deliverable 9) without Docker: its image submissions carry the
templates' code unchanged (the campaign run end to end is tests/test_iwslt2026_campaign_docker.py's)."""

from __future__ import annotations

from pathlib import Path

from tests.iwslt2026_support import SUBMISSIONS, TEMPLATES


def test_the_bundled_images_carry_the_templates_code_unchanged() -> None:
    """The campaign's image submissions are self-contained folders; their copies of template code stay equal to
    the templates (so what the templates' tests check holds for them) and their first build steps are
    simulstream_http's, so the images share its layers."""
    longform = (TEMPLATES / "whisper_longform" / "agent.py").read_bytes()
    assert (SUBMISSIONS / "simulstream-longform" / "agent.py").read_bytes() == longform
    assert (SUBMISSIONS / "context-whisper" / "whisper_longform.py").read_bytes() == longform
    for name in ("prepare.py", "terms.py"):
        template = (TEMPLATES / "context_terms" / name).read_bytes()
        assert (SUBMISSIONS / "context-whisper" / name).read_bytes() == template
    for name in ("requirements-image.txt", "server.yaml"):
        assert ((SUBMISSIONS / "simulstream-longform" / name).read_bytes()
                == (TEMPLATES / "simulstream_http" / name).read_bytes())

    def steps(dockerfile: Path) -> list[str]:
        text = dockerfile.read_text(encoding="utf-8").replace("\\\n", " ")
        return [" ".join(ln.split()) for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]

    assert steps(SUBMISSIONS / "simulstream-longform" / "Dockerfile")[:6] == \
        steps(TEMPLATES / "simulstream_http" / "Dockerfile")[:6]
