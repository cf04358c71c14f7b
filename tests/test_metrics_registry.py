"""The metric registry is the one source of metric names, directions, units and definitions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness import metric_registry as reg
from harness.config import load_config
from harness.errors import ConfigError
from harness.metrics import latency as lat
from harness.scoring import score_records
from harness.scoring.options import ScoringOptions

REPO = Path(__file__).resolve().parents[1]


def _rec(index: int, **extra: object) -> dict:
    rec = {"index": index, "prediction": "la casa verde", "delays": [1, 2, 3], "source_length": 3,
           "reference": "la casa verde"}
    rec.update(extra)
    return rec


def test_every_metric_names_a_function_that_exists() -> None:
    for spec in reg.REGISTRY.values():
        assert callable(reg.function_of(spec.name)), spec.function
        assert spec.direction in ("higher", "lower", "zero") and spec.modality in ("text", "speech", "both")
        assert spec.definition.endswith(".") and "\n" not in spec.definition
    # a latency metric's function computes what the scorer reports under its name
    values = lat.instance_latency([1, 2, 3], 3, 3, False)
    for name in reg.LATENCY_METRICS:
        fn = reg.function_of(name)
        args = {"start_offset": ([1, 2, 3],), "end_offset": ([1, 2, 3], 3),
                "differentiable_average_lagging": ([1, 2, 3], 3), "average_token_delay": ([1, 2, 3], False)}
        assert fn(*args.get(fn.__name__, ([1, 2, 3], 3, 3))) == values[name]


def test_config_accepts_exactly_the_registered_names(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("a\n")
    base = ("task: t\ntracks:\n  - {{name: x, modality: text, source_lang: en, target_lang: es, {field},\n"
            "     datasets: {{test: {{source: s.txt, references: s.txt}}}}}}\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(base.format(field=f"latency: [{', '.join(reg.LATENCY_METRICS)}]"))
    assert load_config(cfg).tracks[0].latency == reg.LATENCY_METRICS
    cfg.write_text(base.format(field="latency: [AL, NE]"))  # NE is a metric, but not a latency metric
    with pytest.raises(ConfigError, match=r"tracks\[0\]\.latency\[1\]: 'NE' is not one of"):
        load_config(cfg)


def test_scores_json_records_say_what_they_are() -> None:
    recs = [_rec(0, references={"orig": "la casa verde", "mono": "la casa"}, elapsed=[1.5, 2.5, 3.5],
                 revisions=[{"delay": 1, "text": "la"}, {"delay": 3, "text": "la casa verde"}])]
    scores = score_records(recs, ScoringOptions(bootstrap=1), latency_unit="char")
    for key, rec in scores.items():
        if key in ("counts", "info"):
            continue
        spec = reg.spec_of(key)
        assert spec is not None, key
        assert rec["kind"] == spec.kind and rec["direction"] == spec.direction and rec["definition"], key
        assert rec["unit"] == reg.unit_of(spec, "char"), key
    assert scores["AP"]["unit"] == "proportion" and "LAAL_CA" not in scores  # text: no computation-aware metrics
    assert "multi-reference" in scores["BLEU@multi"]["definition"]


def _imports(folder: Path) -> list[tuple[Path, str]]:
    return [pair for path in sorted(folder.rglob("*.py")) for pair in _imports_of(path)]


def _imports_of(path: Path) -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((path, node.module))
        elif isinstance(node, ast.Import):
            found += [(path, a.name) for a in node.names]
    return found


def test_data_flows_one_way() -> None:
    """metrics/ never imports the scoring stage; the leaderboard imports no metric or scoring code."""
    for path, module in _imports(REPO / "harness" / "metrics"):
        assert not module.startswith("harness.scoring"), (path, module)
    for path, module in _imports(REPO / "leaderboard"):
        assert not module.startswith(("harness.metrics", "harness.scoring")), (path, module)
    registry_imports = [m for _, m in _imports_of(REPO / "harness" / "metric_registry.py")]
    assert not [m for m in registry_imports if m.startswith("harness")]
