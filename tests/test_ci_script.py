"""CI runs what the README tells a newcomer to run: `.ci/run`'s `newcomer '...'` lines are the README's "Two commands"
block, the same commands in the same order, each from a clean environment (`env -i`)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands(text: str) -> list[str]:
    """The commands of the README's "Two commands" block, without their comments."""
    section = text.split("\n## Two commands", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "the README's 'Two commands' section has no ```bash block"
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.split("#", 1)[0].strip()]


def ci_commands(text: str) -> list[str]:
    """The commands `.ci/run` runs as a newcomer, in order."""
    return re.findall(r"^newcomer '([^']+)'$", text, re.M)


def test_ci_runs_the_readme_commands_in_order_from_a_clean_environment() -> None:
    readme = readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme == ["bash scripts/demo.sh", "bash scripts/test.sh"]  # the main job first, then the tests
    assert ci_commands(ci) == readme
    newcomer = re.search(r"^newcomer\(\) \{.*?^\}", ci, re.M | re.S)
    assert newcomer and re.search(r"\benv -i HOME=\S+ PATH=/usr/local/sbin:\S+ LANG=\S+", newcomer.group(0))


def test_a_readme_that_drifts_from_ci_is_seen() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    drifted = readme.replace("bash scripts/test.sh    #", "bash scripts/test.sh --fast    #", 1)
    assert drifted != readme
    assert readme_commands(drifted) != ci_commands((ROOT / ".ci" / "run").read_text(encoding="utf-8"))


def test_every_script_that_runs_the_harness_puts_the_set_ups_environment_on_path() -> None:
    """From a newcomer's shell `harness` is not on PATH and `python3` is the system's: a script that runs either
    for the harness sources scripts/env.sh first."""
    for script in sorted((ROOT / "scripts").glob("*.sh")):
        lines = [line.split("#", 1)[0] for line in script.read_text(encoding="utf-8").splitlines()]
        uses = [i for i, line in enumerate(lines) if re.search(r"(^|[\s;&|(])(harness\s|python3 -m harness)", line)]
        sourced = [i for i, line in enumerate(lines) if re.search(r"^\s*(source|\.)\s+scripts/env\.sh\b", line)]
        assert not uses or (sourced and sourced[0] < uses[0]), f"{script.name} line {uses[0] + 1}"
