"""The type checker's configuration is strict enough that a wrong keyword argument fails, also inside a function
without annotations. (That the house type-checks clean is checked once, by scripts/test.sh, not again here.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")
REPO = Path(__file__).resolve().parents[1]


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=900)


def test_a_wrong_keyword_fails_even_in_a_function_without_annotations(tmp_path: Path) -> None:
    snippet = tmp_path / "wrong_keyword.py"
    snippet.write_text("from pathlib import Path\n\nfrom harness.jsonio import write_json\n\n\n"
                       "def save(path):\n    write_json(Path(path), {}, indnt=2)\n", encoding="utf-8")
    result = _mypy("--config-file", str(REPO / "setup.cfg"), str(snippet))
    assert result.returncode == 1 and 'Unexpected keyword argument "indnt"' in result.stdout, result.stdout
