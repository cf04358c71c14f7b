"""One owner per fact: artifact names live in harness.layout, and only harness.runlog opens instances.log."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness import layout

REPO = Path(__file__).resolve().parents[1]
ARTIFACT_NAMES = {layout.INSTANCES_LOG, layout.SCORES, layout.INSTANCE_SCORES, layout.RUN_META, layout.CLIENT_LOG,
                  layout.SERVER_LOG, layout.MANIFEST, layout.BUILD_LOG, layout.SUMMARY}
#: files that may spell a name for another reason: docker's own `docker save` archive has a manifest.json
ALLOWED = {REPO / "harness" / "layout.py", REPO / "harness" / "images" / "submission.py"}
READ_CALLS = {"open", "read_text", "read_bytes", "write_text", "write_bytes"}


def _sources() -> list[Path]:
    return sorted([*(REPO / "harness").rglob("*.py"), *(REPO / "leaderboard").rglob("*.py")])


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (they may name files in prose)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _mentions_run_log(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "instances_log" for n in ast.walk(node)) or any(
        isinstance(n, ast.Constant) and n.value == layout.INSTANCES_LOG for n in ast.walk(node))


@pytest.mark.slow
def test_only_layout_spells_an_artifact_name() -> None:
    offenders = []
    for path in _sources():
        if path in ALLOWED:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in ARTIFACT_NAMES and id(node) not in docs:
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}")
    assert not offenders, "artifact names belong in harness/layout.py:\n" + "\n".join(offenders)


def _log_opens(tree: ast.AST) -> list[int]:
    """Line numbers of calls that open, read or write a path naming instances.log."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        target = [func.value] if isinstance(func, ast.Attribute) else node.args[:1]
        if name in READ_CALLS and any(_mentions_run_log(t) for t in target):
            lines.append(node.lineno)
    return lines


def test_only_the_run_log_owner_opens_instances_log() -> None:
    owner = REPO / "harness" / "runlog"
    offenders = [f"{path.relative_to(REPO)}:{line}" for path in _sources() if owner not in path.parents
                 for line in _log_opens(ast.parse(path.read_text(encoding="utf-8")))]
    assert not offenders, "instances.log is opened only by harness.runlog:\n" + "\n".join(offenders)


def test_the_rule_sees_both_ways_of_opening_the_log() -> None:
    """So that a pass above is not an empty search."""
    code = "run = layout.RunDir(p)\nrun.instances_log.read_text()\nopen(run.instances_log)\nopen(other)\n"
    assert _log_opens(ast.parse(code)) == [2, 3]


def _status_words() -> set[str]:
    from harness.status import InstanceStatus, RunStatus

    return {s.value for s in (*RunStatus, *InstanceStatus)}


def _module_level_status_names(tree: ast.Module, words: set[str]) -> list[int]:
    """Lines where a module binds a name to a status word or a tuple of them (a second owner of the words)."""
    def spelled(value: ast.AST) -> bool:
        if isinstance(value, ast.Constant):
            return value.value in words
        return isinstance(value, (ast.Tuple, ast.List, ast.Set)) and bool(value.elts) and all(
            isinstance(e, ast.Constant) and e.value in words for e in value.elts)

    return [node.lineno for node in tree.body
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and spelled(node.value)]


def test_only_the_status_module_spells_the_statuses() -> None:
    words, owner = _status_words(), REPO / "harness" / "status.py"
    offenders = [f"{path.relative_to(REPO)}:{line}" for path in _sources() if path != owner
                 for line in _module_level_status_names(ast.parse(path.read_text(encoding="utf-8")), words)]
    assert not offenders, "status words belong in harness/status.py:\n" + "\n".join(offenders)
    assert _module_level_status_names(ast.parse('OK = "ok"\nPAIR = ("ok", "partial")\nX = "okay"\n'), words) == [1, 2]


#: renames that are not the JSON/text write of harness.jsonio: whole folders and a tar built by root in a temp folder
RENAMES_ALLOWED = {"harness/jsonio.py", "harness/images/wheelhouse.py", "harness/images/base.py",
                   "harness/portal/archive.py"}


def _renames(tree: ast.AST) -> list[int]:
    """Lines that rename a file over another: os.replace/os.rename, or `<tmp>.replace(target)`/`.rename(target)`."""
    lines = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        func = node.func
        if func.attr in ("replace", "rename") and isinstance(func.value, ast.Name) and (
                func.value.id == "os" or (len(node.args) == 1 and not node.keywords
                                          and any(w in func.value.id for w in ("tmp", "temp", "part", "staging")))):
            lines.append(node.lineno)
    return lines


def test_only_jsonio_writes_a_temporary_and_renames_it() -> None:
    offenders = [f"{path.relative_to(REPO)}:{line}" for path in _sources()
                 if str(path.relative_to(REPO)) not in RENAMES_ALLOWED
                 for line in _renames(ast.parse(path.read_text(encoding="utf-8")))]
    assert not offenders, "write files atomically with harness.jsonio:\n" + "\n".join(offenders)
    assert _renames(ast.parse("os.replace(a, b)\ntmp.replace(p)\ns.replace('a', 'b')\n")) == [1, 2]


#: harness/docs_reference.py describes the variable for the reference page; it opens no folder
CACHE_ALLOWED = {"harness/cache.py", "harness/docs_reference.py"}


def test_only_the_cache_module_names_the_cache_folder(tmp_path: Path, monkeypatch) -> None:
    offenders = [str(path.relative_to(REPO)) for path in _sources()
                 if str(path.relative_to(REPO)) not in CACHE_ALLOWED and any(
                     isinstance(n, ast.Constant) and n.value in ("HARNESS_CACHE", ".cache")
                     for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))]
    assert not offenders, "the cache folder is harness.cache.cache_dir():\n" + "\n".join(offenders)
    from harness.cache import cache_dir

    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c" and (tmp_path / "c").is_dir()


def test_no_two_classes_share_a_name() -> None:
    where: dict[str, list[str]] = {}
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(path.relative_to(REPO)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not twice, f"one name, one class: {twice}"


# ------------------------------------------------------------------------------------------------ the layers
#: The house's one ordered layer table, ground floor first. A module belongs to the longest entry naming it or a
#: package above it (`harness` itself is only harness/__init__.py); it may import its own entry's modules and any
#: entry below its own, never one above. Imports inside functions and under TYPE_CHECKING count as well.
LAYERS: tuple[str, ...] = (
    # the ground floor: words and helpers that know no stage
    "harness", "harness.errors", "harness.status", "harness.fields", "harness.sizes", "harness.units",
    "harness.text", "harness.digest", "harness.cache", "harness.boundedjson", "harness.protocol", "harness.jsonio",
    "harness.yamlio",
    "harness.recordings",
    "harness.layout", "harness.runmeta", "harness.metric_registry", "harness.profiles", "harness.config",
    # the stages: datasets and submissions; the run log, the evaluation server that writes it, its drivers and the
    # client; the metrics and the scoring that read the log (long-form is one of its modes); then the organizer's
    # pipeline that drives them all: images, one run (joint mode and the backends), a batch of runs
    "harness.data", "harness.intake", "harness.runlog", "harness.detokenizers", "harness.interop", "harness.server",
    "harness.drivers",
    "harness.client", "harness.baselines", "harness.metrics", "harness.scoring", "harness.images", "harness.run",
    "harness.batch",
    # after the results exist: they only read results
    "harness.human", "harness.captions", "leaderboard",
    # the campaign portal: above the batch it drives (issue 46)
    "harness.portal",
    # the commands, on top
    "harness.commands", "harness.cli", "harness.__main__",
    # the reference pages, generated from the command line's parsers
    "harness.docs_reference",
)
#: Known edges against the flow: none (the long-form circles of data/speech and longform/scoring are gone: the
#: dataset loader is in data/, long-form scoring in scoring/). An entry here is a debt with a name.
KNOWN_UPWARD: frozenset[tuple[str, str]] = frozenset()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in _sources()}


def _imported(module: str, is_package: bool, tree: ast.AST, known: set[str]) -> set[str]:
    """The house's modules that `tree` imports anywhere (top level, functions, TYPE_CHECKING), by module name."""
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for name in names:
            while name not in known and "." in name:  # `from harness.x import function` names module harness.x
                name = name.rsplit(".", 1)[0]
            if name in known and name != module:
                found.add(name)
    return found


def _import_graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {m: _imported(m, p.name == "__init__.py", ast.parse(p.read_text(encoding="utf-8")), known)
            for m, p in modules.items()}


def _layer(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for rank, entry in enumerate(LAYERS):
        if module == entry or (entry != "harness" and module.startswith(entry + ".")):
            if best is None or len(entry) > best[0]:
                best = (len(entry), rank)
    return None if best is None else best[1]


def _against_the_flow(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            here, there = _layer(module), _layer(target)
            if here is not None and there is not None and there > here and (module, target) not in KNOWN_UPWARD:
                out.append(f"{module} ({LAYERS[here]}) imports {target} ({LAYERS[there]})")
    return out


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), without the known edges."""
    edges = {m: sorted(t - {b for a, b in KNOWN_UPWARD if a == m}) for m, t in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, []):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def test_every_module_has_a_layer() -> None:
    missing = sorted(m for m in _modules() if _layer(m) is None)
    assert not missing, f"add these to LAYERS in {Path(__file__).name}: {missing}"


def test_no_import_runs_against_the_flow() -> None:
    offenders = _against_the_flow(_import_graph())
    assert not offenders, "imports against the layer table (LAYERS):\n" + "\n".join(offenders)


def test_no_two_modules_import_each_other_even_through_others() -> None:
    circles = _circles(_import_graph())
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_the_layer_rules_see_what_they_forbid() -> None:
    """So that the passes above are not empty searches: an upward import inside a function, and a circle."""
    known = {"harness.metrics.meteor", "harness.images.wheelhouse", "harness.batch.job", "harness.batch.scheduler"}
    code = "def cache():\n    from harness.images.wheelhouse import cache_dir\n    return cache_dir()\n"
    graph = {"harness.metrics.meteor": _imported("harness.metrics.meteor", False, ast.parse(code), known)}
    assert _against_the_flow(graph) == [
        "harness.metrics.meteor (harness.metrics) imports harness.images.wheelhouse (harness.images)"]
    relative = _imported("harness.batch.job", False, ast.parse("from .scheduler import X\n"), known)
    circle = {"harness.batch.job": relative, "harness.batch.scheduler": {"harness.batch.job"}}
    assert [sorted(c) for c in _circles(circle)] == [["harness.batch.job", "harness.batch.scheduler"]]


# ------------------------------------------------------------------------------------------------ small functions
MAX_COMPLEXITY = 20  # radon's rank C at most: rank D (21+) is code a reader cannot hold in their head
MAX_FUNCTION_LINES = 80


def test_no_function_is_too_complex_or_too_long() -> None:
    from radon.complexity import cc_visit

    offenders = []
    for path in _sources():  # harness/ and leaderboard/
        code = path.read_text(encoding="utf-8")
        for block in cc_visit(code):
            # functions, and the methods of classes (a class is not a function: its length is its methods')
            items = block.methods if hasattr(block, "methods") else [block]
            for item in items:
                lines = item.endline - item.lineno + 1
                if item.complexity > MAX_COMPLEXITY or lines > MAX_FUNCTION_LINES:
                    offenders.append(f"{path.relative_to(REPO)}:{item.lineno}: {item.name} "
                                     f"(complexity {item.complexity}, {lines} lines)")
    assert not offenders, "split these into named steps:\n" + "\n".join(offenders)


def test_the_size_rule_sees_a_long_tangled_function() -> None:
    """So that a pass above is not an empty search."""
    from radon.complexity import cc_visit

    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(25))
    (block,) = cc_visit(f"def tangled(x):\n{body}    return -1\n")
    assert block.complexity > MAX_COMPLEXITY


def _yaml_loads(tree: ast.AST) -> list[int]:
    """Lines that parse YAML themselves: `yaml.safe_load(...)`, `yaml.load(...)`, `yaml.full_load(...)`."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "yaml"
            and node.func.attr in ("safe_load", "load", "full_load", "unsafe_load", "safe_load_all", "load_all")]


def test_only_yamlio_parses_yaml() -> None:
    owner = REPO / "harness" / "yamlio.py"
    offenders = [f"{path.relative_to(REPO)}:{line}" for path in _sources() if path != owner
                 for line in _yaml_loads(ast.parse(path.read_text(encoding="utf-8")))]
    assert not offenders, "read YAML with harness.yamlio (one loader, one error form):\n" + "\n".join(offenders)
    assert _yaml_loads(ast.parse("yaml.safe_load(t)\nyaml.safe_dump(d)\nyaml.load(t, Loader=L)\n")) == [1, 3]
