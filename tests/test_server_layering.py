"""The server records and the client decodes: joint mode sits above both, and nothing in the server scores."""

from __future__ import annotations

import ast
from pathlib import Path

HARNESS = Path(__file__).parents[1] / "harness"


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports (at any depth: top level and inside functions)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_client_imports_nothing_from_the_server() -> None:
    for path in sorted((HARNESS / "client").glob("*.py")):
        server = {m for m in imported_modules(path) if m.startswith("harness.server")}
        assert not server, f"{path.name} imports {sorted(server)}"


def test_the_server_package_neither_scores_nor_imports_in_a_circle() -> None:
    for path in sorted((HARNESS / "server").glob("*.py")):
        scoring = {m for m in imported_modules(path) if m.startswith(("harness.scoring", "harness.metrics.quality"))}
        assert not scoring, f"{path.name} imports {sorted(scoring)}"
    assert not any(m.startswith("harness.server.app") for m in imported_modules(HARNESS / "server" / "handlers.py"))


def test_joint_mode_uses_the_servers_own_set_up() -> None:
    joint = imported_modules(HARNESS / "run" / "joint.py")
    assert "harness.server.app.run_server" in joint
    source = (HARNESS / "run" / "joint.py").read_text(encoding="utf-8")
    assert "bind_sockets" not in source and "HTTPServer" not in source
