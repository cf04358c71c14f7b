"""harness.yamlio: the one YAML loader of task configs and submission.yaml, through their real readers."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import load_config
from harness.errors import ConfigError, SubmissionError
from harness.intake.submission import load_submission


@pytest.mark.parametrize("load, error, name", [(load_config, ConfigError, "task.yaml"),
                                                (load_submission, SubmissionError, "submission.yaml")])
def test_both_readers_give_one_error_for_bad_yaml(tmp_path: Path, load, error, name: str) -> None:
    path = tmp_path / name
    path.write_text("a: 1\nb: [2\n", encoding="utf-8")
    with pytest.raises(error) as info:
        load(path)
    assert str(info.value).startswith(f"{path}: line 3: invalid YAML: ")
    path.write_bytes(b"a: \xff\n")
    with pytest.raises(error, match=f"^{path}: cannot read: "):
        load(path)
