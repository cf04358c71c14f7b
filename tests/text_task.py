"""A small text task on disk (three en→es sentences, two reference sets) for the server, client and run tests."""

from __future__ import annotations

from pathlib import Path

SOURCES = ["the cat sat on the mat", "hello world", "one two three four five"]
REFS = {"orig": ["el gato", "hola mundo", "uno dos tres cuatro cinco"], "mono": ["gato", "hola", "uno"]}


def make_text_task(root: Path, sources: list[str] = SOURCES, limits: str = "") -> Path:
    """Write the sources, both reference sets (padded with "x" past REFS) and `task.yaml` (track `text-en-es`,
    dataset `dev`, `limits` appended as YAML) into `root`; returns the config path."""
    (root / "src.en").write_text("\n".join(sources) + "\n", encoding="utf-8")
    for name, lines in REFS.items():
        (root / f"{name}.es").write_text("\n".join(lines[: len(sources)] + ["x"] * (len(sources) - len(lines)))
                                         + "\n", encoding="utf-8")
    cfg = root / "task.yaml"
    cfg.write_text(f"""task: t
tracks:
  - name: text-en-es
    modality: text
    source_lang: en
    target_lang: es
    datasets:
      dev: {{source: src.en, references: {{orig: orig.es, mono: mono.es}}}}
{limits}""", encoding="utf-8")
    return cfg


TWO_SPLIT_SOURCES = ["el gato negro", "un perro", "la casa azul grande"]


def make_task(root: Path) -> Path:
    """A task with a dev and a test split of the same three sentences (their own references); the config path."""
    for split in ("dev", "test"):
        (root / f"{split}.en").write_text("\n".join(TWO_SPLIT_SOURCES) + "\n", encoding="utf-8")
        (root / f"{split}.es").write_text("\n".join(TWO_SPLIT_SOURCES) + "\n", encoding="utf-8")
    cfg = root / "task.yaml"
    cfg.write_text("""task: t
tracks:
  - name: text-en-es
    modality: text
    source_lang: en
    target_lang: es
    datasets:
      dev: {source: dev.en, references: {orig: dev.es}}
      test: {source: test.en, references: {orig: test.es}}
""", encoding="utf-8")
    return cfg
