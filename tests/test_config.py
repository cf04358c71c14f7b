"""Task config parsing: typed values, and one-line errors that name the file and field."""

from pathlib import Path

import pytest

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
