"""The test suite's own house rules: helpers are imported one way, no test module imports another, the skip
rule of each outside dependency exists once (tests/conftest.py), and a file's name says whether its tests need
Docker (`tests/test_*_docker.py` holds the tests marked `docker` or `lab`, and only those), and under
scripts/test.sh's `--dist loadfile` the Docker modules go out first."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SOURCES = sorted(p for p in TESTS.rglob("*.py") if "agents" not in p.relative_to(TESTS).parts)
LOCAL = {p.stem for p in TESTS.glob("*.py")} | {p.name for p in TESTS.iterdir() if p.is_dir()}
DEPENDENCIES = "docker|apertium|espeak-ng|chromium|chromedriver"
PROBES = re.compile(rf"""which\(\s*["']({DEPENDENCIES})["']|["']docker["'],\s*["']info["']""")
TEST_MODULES = [p for p in SOURCES if p.name.startswith("test_")]
ENGINE_MARKS = {"docker", "lab"}  # the markers of tests that need a Docker engine


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


def marks(nodes: Iterable[ast.AST]) -> set[str]:
    """The NAMEs of every `pytest.mark.NAME` in `nodes` (decorators, or the value of a `pytestmark`)."""
    return {n.attr for node in nodes for n in ast.walk(node)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"}


def shared_marks(body: list[ast.stmt]) -> set[str]:
    """The markers a module's or class's `pytestmark = ...` gives all its tests."""
    values = [n.value for n in body if isinstance(n, ast.Assign | ast.AnnAssign) and n.value is not None
              and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                      for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    return marks(values)


def marked_tests(body: list[ast.stmt], inherited: set[str]) -> Iterator[tuple[str, set[str]]]:
    """Each test function of `body` (in `Test*` classes too) with its markers, its module's and class's included."""
    for node in body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            yield from marked_tests(node.body, inherited | marks(node.decorator_list) | shared_marks(node.body))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            yield node.name, inherited | marks(node.decorator_list)


def test_docker_tests_and_only_they_live_in_files_named_docker() -> None:
    """`-m "not docker"` and the file names agree: the tests that need an engine are found by name alone."""
    wrong = []
    for path in TEST_MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = path.stem.endswith("_docker")
        for name, found in marked_tests(tree.body, shared_marks(tree.body)):
            where = f"{path.relative_to(TESTS)}::{name}"
            if found & ENGINE_MARKS and not named:
                wrong.append(f"{where} is marked {' and '.join(sorted(found & ENGINE_MARKS))}: it belongs in a "
                             f"tests/test_*_docker.py")
            elif named and "docker" not in found:
                wrong.append(f"{where} is not marked docker: a _docker.py file holds Docker tests only")
    assert wrong == [], "\n".join(wrong)


def test_docker_modules_go_out_first_when_modules_are_handed_out_whole(tmp_path: Path) -> None:
    """A real pytest-xdist session as scripts/test.sh starts one, with tests/conftest.py's ordering: the Docker
    module runs before the other although its name sorts after it (pytest-xdist schedules its workers'
    collections, and a worker's own `dist` option is always "no")."""
    ran = tmp_path / "ran.txt"
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_configure, pytest_long_modules_first  "
                                          "# noqa: F401\n", encoding="utf-8")
    body = f"def test_it():\n    with open({str(ran)!r}, 'a') as f:\n        f.write(__name__ + '\\n')\n"
    (tmp_path / "test_a.py").write_text(body, encoding="utf-8")
    (tmp_path / "test_b_docker.py").write_text(f"import pytest\n\npytestmark = pytest.mark.docker\n\n\n{body}",
                                               encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "1", "--dist",
                          "loadfile", "--no-loadscope-reorder", str(tmp_path)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(TESTS.parent)})
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert ran.read_text(encoding="utf-8").split() == ["test_b_docker", "test_a"]
