"""Task config parsing: typed values, and one-line errors that name the file and field."""

from pathlib import Path

import pytest

from harness.cli import main
from harness.config import load_config
from harness.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "dev.en").write_text("a b c\n")
    (tmp_path / "dev.es").write_text("x y z\n")
    p = tmp_path / "task.yaml"
    p.write_text(text)
    return p


GOOD = """
task: t
tracks:
  - name: text-en-es
    modality: text
    source_lang: en
    target_lang: es
    primary: {quality: BLEU, latency: LAAL}
    regimes: [{name: low, max_latency: 3}]
    datasets:
      dev: {source: dev.en, references: {orig: dev.es}}
limits: {cpus: 1, memory: 2g, gpus: 0}
"""


def test_good_config_resolves_paths_and_defaults(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, GOOD))
    track = cfg.track()
    assert track.dataset("dev").source == (tmp_path / "dev.en").resolve()
    assert track.latency_unit == "word" and track.segment_size == 1
    assert track.regimes[0].max_latency == 3.0
    assert cfg.limits.gpus == () and len(cfg.sha256) == 64


@pytest.mark.parametrize(
    "old,new,field",
    [
        ("modality: text", "modality: video", "tracks[0].modality"),
        ("source: dev.en", "source: missing.en", "tracks[0].datasets.dev.source"),
        ("max_latency: 3", "max_latency: high", "tracks[0].regimes[0].max_latency"),
        ("memory: 2g", "memry: 2g", "limits.memry"),
    ],
)
def test_bad_field_is_named(tmp_path: Path, old: str, new: str, field: str) -> None:
    p = write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(ConfigError) as err:
        load_config(p)
    assert str(p) in str(err.value) and field in str(err.value)
    assert "\n" not in str(err.value)


def test_invalid_yaml_names_line(tmp_path: Path) -> None:
    p = write(tmp_path, "task: [unclosed\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config(p)


@pytest.mark.parametrize(
    "old,new,message",
    [
        ("task: t", "task: t\nextra_thing: 1",
         "extra_thing: unknown field (known: task, tracks, limits, backend, swarm, metrics, fetch, "
         "secrets, portal)"),
        ("    modality: text", "    modality: text\n    latencyunit: char",
         "tracks[0].latencyunit: unknown field; did you mean 'latency_unit'?"),
        ("    modality: text", "    modality: text\n    segmentsize: 300",
         "tracks[0].segmentsize: unknown field; did you mean 'segment_size'?"),
        ("{source: dev.en, references", "{source: dev.en, src: dev.en, references",
         "tracks[0].datasets.dev.src: unknown field; did you mean 'source'?"),
        ("{source: dev.en, references", "{src: dev.en, references",
         "tracks[0].datasets.dev.src: unknown field; did you mean 'source'?"),
        ("latency: LAAL}", "latncy: LAAL}", "tracks[0].primary.latncy: unknown field; did you mean 'latency'?"),
        ("max_latency: 3}", "max_latency: 3, unit: ms}",
         "tracks[0].regimes[0].unit: unknown field (known: name, min_latency, max_latency)"),
        ("memory: 2g", "memry: 2g", "limits.memry: unknown field; did you mean 'memory'?"),
        ("gpus: 0", "GPUs: 0", "limits.GPUs: unknown field; did you mean 'gpus'?"),
        ("modality: text", "modality: txt",
         "tracks[0].modality: 'txt' is not one of text, speech; did you mean 'text'?"),
        ("    modality: text", "    modality: text\n    latency_unit: words",
         "tracks[0].latency_unit: 'words' is not one of word, char; did you mean 'word'?"),
        ("latency: LAAL}", "latency: laal}",
         "tracks[0].primary.latency: 'laal' is not one of AL, LAAL, AP, DAL, ATD, StartOffset, EndOffset, YAAL, CW; "
         "did you mean 'LAAL'?"),
        ("memory: 2g", "memory: 2 gigs", "limits.memory: not a size: '2 gigs' (examples: 2g, 256m, 1048576)"),
        ("memory: 2g", "memory: 2g, shm_size: 0", "limits.shm_size: must be a positive size, got 0"),
    ],
)
def test_unknown_fields_and_bad_sizes_fail_at_load_with_one_line(tmp_path: Path, old: str, new: str,
                                                                 message: str) -> None:
    assert old in GOOD
    p = write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(ConfigError) as err:
        load_config(p)
    assert str(err.value) == f"{p}: {message}"


def test_sizes_in_docker_units_are_accepted(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, GOOD.replace("memory: 2g", "memory: 1.5G, shm_size: 67108864")))
    assert (cfg.limits.memory, cfg.limits.shm_size) == ("1.5G", "67108864")


def test_cli_reports_a_config_typo_as_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, GOOD.replace("    modality: text", "    modality: text\n    latencyunit: char"))
    agent = Path(__file__).resolve().parents[1] / "agent_templates" / "waitk_apertium" / "agent.py"
    rc = main(["run", "--config", str(p), "--dataset", "dev", "--agent", str(agent), "--output", str(tmp_path / "o")])
    out = capsys.readouterr()
    assert rc != 0 and out.out == ""
    assert out.err.strip().splitlines() == [
        f"harness run: error: {p}: tracks[0].latencyunit: unknown field; did you mean 'latency_unit'?"]
    assert not (tmp_path / "o").exists()
