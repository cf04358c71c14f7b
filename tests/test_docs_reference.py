"""Documentation that follows the code (issue 33, item 3): the generated reference pages (commands and options from
the argument parsers, metrics from the registry, exit codes from harness.errors) are current, every link between the
pages resolves, the README stays a five-minute read, and the code map names what `harness/` holds."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import pytest

from harness import docs_reference, errors
from harness.cli import build_parser
from harness.metric_registry import PEERS, REGISTRY

REPO = Path(__file__).resolve().parents[1]
DOCS = sorted([REPO / "README.md", REPO / "CHANGELOG.md", *(REPO / "docs").rglob("*.md")])
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_generated_reference_pages_are_current() -> None:
    stale = docs_reference.stale_pages()
    assert not stale, f"docs/reference/{stale} is stale: run `{docs_reference.WRITE_COMMAND}` and commit the pages"


def test_the_staleness_check_sees_a_changed_page_and_write_repairs_it(tmp_path: Path) -> None:
    assert docs_reference.main(["--check", "--folder", str(tmp_path)]) == 1  # no pages at all: every one is stale
    assert docs_reference.main(["--write", "--folder", str(tmp_path)]) == 0
    assert docs_reference.stale_pages(tmp_path) == []
    page = tmp_path / "commands.md"
    page.write_text(page.read_text(encoding="utf-8").replace("`--resume`", "`--continue`", 1), encoding="utf-8")
    assert docs_reference.stale_pages(tmp_path) == ["commands.md"]
    assert docs_reference.main(["--check", "--folder", str(tmp_path)]) == 1
    assert docs_reference.write_pages(tmp_path) == ["commands.md"]
    assert docs_reference.main(["--check", "--folder", str(tmp_path)]) == 0


def test_the_pages_are_the_same_whatever_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """`harness client --server` defaults to $HARNESS_SERVER_URL: the page must not depend on where it is built."""
    monkeypatch.setenv("HARNESS_SERVER_URL", "http://elsewhere:1")
    monkeypatch.setenv("COLUMNS", "40")
    assert docs_reference.stale_pages() == []
    assert os.environ["HARNESS_SERVER_URL"] == "http://elsewhere:1"  # given back as it was


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    out = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                out += _parsers(child)
    return out


def test_every_command_and_option_is_in_the_command_reference() -> None:
    page = docs_reference.commands_page()
    parsers = _parsers(build_parser())
    assert len(parsers) > 15  # every command, and the actions of `human` and `image`
    for parser in parsers[1:]:
        assert f"\n## {parser.prog}\n" in page, parser.prog
        section = page.split(f"\n## {parser.prog}\n", 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in section, (parser.prog, option)


def test_an_option_added_to_a_parser_shows_in_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """What makes the merge-time re-run pick up another engineer's new option: the page is built from the parser."""
    from harness.commands import view

    original = view.add_arguments

    def with_new_option(parser: argparse.ArgumentParser) -> None:
        original(parser)
        parser.add_argument("--open-browser", metavar="BROWSER", default="firefox", help="open it in %(metavar)s")

    monkeypatch.setattr(view, "add_arguments", with_new_option)
    row = "| `--open-browser BROWSER` | open it in BROWSER | `firefox` |"
    assert row in docs_reference.commands_page()


def test_every_script_and_environment_variable_is_in_the_command_reference() -> None:
    page = docs_reference.commands_page()
    for script in (REPO / "scripts").glob("*.sh"):
        assert f"\n### scripts/{script.name}\n" in page, script.name
    names = docs_reference.environment_variables()
    assert {"HARNESS_CACHE", "HARNESS_VENV", "HARNESS_TRACEBACK", "HARNESS_TEST_WORKERS"} <= set(names)
    undescribed = sorted(set(names) - set(docs_reference.ENVIRONMENT))
    assert not undescribed, f"describe these in harness.docs_reference.ENVIRONMENT: {undescribed}"
    gone = sorted(set(docs_reference.ENVIRONMENT) - set(names))
    assert not gone, f"no code reads these any more; drop them from harness.docs_reference.ENVIRONMENT: {gone}"
    for name in names:
        assert f"| `{name}` |" in page


def test_every_metric_has_its_definition_unit_and_peer_in_the_metric_reference() -> None:
    assert set(PEERS) == set(REGISTRY), "name the peer of every metric in harness.metric_registry.PEERS"
    page = docs_reference.metrics_page()
    for name, spec in REGISTRY.items():
        section = page.split(f"\n### {name}\n", 1)[1].split("\n### ", 1)[0]
        assert spec.definition in section and f"`{spec.unit}`" in section and PEERS[name] in section, name


def test_every_exit_code_is_in_the_exit_code_reference() -> None:
    constants = {name: value for name, value in vars(errors).items() if name.startswith("EXIT_")}
    assert {name: code for name, code, _ in docs_reference.exit_codes()} == constants
    page = docs_reference.exit_codes_page()
    for name, code in constants.items():
        assert f"| {code} | `{name}` |" in page


def _anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of a markdown page (code blocks left out)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return {docs_reference._anchor(h.strip()) for h in re.findall(r"^#+ (.+)$", text, re.M)}


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_between_the_pages_resolves(page: Path) -> None:
    if not page.is_file():
        pytest.fail(f"{page.relative_to(REPO)} is missing")
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{target}: no such heading")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_the_link_check_sees_a_missing_heading(tmp_path: Path) -> None:
    """So that a pass above is not an empty search."""
    assert "1-the-task-config" in _anchors((REPO / "docs" / "organizer.md").read_text(encoding="utf-8"))
    assert "several-gpu-hosts---backend-swarm" in _anchors("## Several GPU hosts: `--backend swarm`\n")
    assert "no-such-heading" not in _anchors("## A heading\n```\n# no such heading\n```\n")


def test_the_readme_is_a_five_minute_read_with_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    for line in ("bash scripts/demo.sh", "bash scripts/test.sh", "bash scripts/test.sh --fast",
                 "source scripts/env.sh", "scripts/setup.sh", ".venv"):
        assert line in readme, line
    for heading in ("## Quick start: organizer", "## Quick start: participant", "## Quick start: scoring a log",
                    "## Commands", "## Documentation"):
        assert heading in readme, heading
    assert "measured here" not in readme.lower()  # lab notes live in docs/design/benchmarks.md


def _code_map() -> str:
    page = (REPO / "docs" / "design" / "architecture.md").read_text(encoding="utf-8")
    return page.split("```", 2)[1]


def test_the_code_map_names_what_harness_holds_and_nothing_that_is_gone() -> None:
    code_map = _code_map()
    for named in re.findall(r"^((?:harness|leaderboard)/\S*)", code_map, re.M):
        assert (REPO / named.rstrip(",")).exists(), f"docs/design/architecture.md names {named}, which is gone"
    held = [p.name + "/" for p in (REPO / "harness").iterdir() if (p / "__init__.py").is_file()]
    held += [p.name for p in (REPO / "harness").glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    missing = sorted(n for n in held if not re.search(rf"(?<![\w/]){re.escape(n)}", code_map.replace("harness/", "")))
    assert not missing, f"docs/design/architecture.md's code map does not name: {missing}"


def _layers() -> list[str]:
    """LAYERS of tests/test_house_rules.py, read from its source (a test module imports no other)."""
    import ast

    tree = ast.parse((REPO / "tests" / "test_house_rules.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "LAYERS":
            assert node.value is not None
            return list(ast.literal_eval(node.value))
    raise AssertionError("no LAYERS in tests/test_house_rules.py")


def test_the_layer_sentence_names_the_stage_packages_of_the_layer_table() -> None:
    """The stages the architecture page lists in order are those of LAYERS (after the ground floor, below the
    commands), in its order, and no others: a removed layer (`longform`) cannot stay in the page."""
    page = (REPO / "docs" / "design" / "architecture.md").read_text(encoding="utf-8").split("```", 2)[2]
    sentence = page[page.index("then `data`"):page.index("and the commands on")]
    named = re.findall(r"`(\w+)`", sentence)
    layers = _layers()
    between = layers[layers.index("harness.config") + 1:layers.index("harness.commands")]
    stages = [e.removeprefix("harness.") for e in between]
    assert named == stages, f"docs/design/architecture.md lists {named}; LAYERS has {stages}"
