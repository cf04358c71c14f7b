"""The test suite's own house rules: helpers are imported one way, no test module imports another, and the skip
rule of each outside dependency exists once (tests/conftest.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SOURCES = sorted(p for p in TESTS.rglob("*.py") if "agents" not in p.relative_to(TESTS).parts)
LOCAL = {p.stem for p in TESTS.glob("*.py")} | {p.name for p in TESTS.iterdir() if p.is_dir()}
DEPENDENCIES = "docker|apertium|espeak-ng|chromium|chromedriver"
PROBES = re.compile(rf"""which\(\s*["']({DEPENDENCIES})["']|["']docker["'],\s*["']info["']""")


def imports(path: Path) -> list[str]:
    """Every module `path` imports, at any depth (top level and inside functions)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(TESTS)))
def test_helpers_come_from_tests_and_no_test_module_imports_another(path: Path) -> None:
    for module in imports(path):
        top, _, rest = module.partition(".")
        assert top not in LOCAL, f"{path.name} imports {module}: import helpers as tests.{module}"
        if top == "tests":
            name = rest.rpartition(".")[2]
            assert not name.startswith("test_") and name != "conftest", f"{path.name} imports the test module {module}"


def test_dependencies_are_probed_only_in_conftest() -> None:
    for path in SOURCES:
        if path.name != "conftest.py":
            found = PROBES.search(path.read_text(encoding="utf-8"))
            assert found is None, f"{path.name} probes {found.group(0)!r}: use the marker of tests/conftest.py"
