"""`harness rescore`: a folder of other tools' long-form logs scored under the 2025 and 2026 profiles, one page
side by side, each run's published 2025 values (the 2025 tool's `scores.resegmented.tsv`) checked against ours."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from harness.cli import main
from tests.profile_talks import write_talks

pytestmark = [pytest.mark.mwersegmenter, pytest.mark.slow]


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def _tsv(values: list[float] | None, version: str = "2.0") -> str:
    lines = [f"StreamLAAL v{version}.", "some segment lines the tool printed"]
    if values is not None:
        lines += ["BLEU\tStreamLAAL\tStreamLAAL_CA", "\t".join(repr(v) for v in values)]
    return "\n".join(lines) + "\n"


def test_a_folder_of_logs_under_both_profiles(tmp_path: Path) -> None:
    folder = tmp_path / "experiments"
    talks = write_talks("de", folder / "system-a", [31, 32])
    for name in ("system-b", "system-c", "system-d"):
        (folder / name).mkdir()
        (folder / name / "instances.log").write_text(talks["log"].read_text(encoding="utf-8"), encoding="utf-8")
    data = ["--segmentation", str(talks["segmentation"]), "--references", str(talks["references"])]
    rc, out, _ = _run("score", str(talks["log"]), *data, "--target-lang", "de", "--profile", "iwslt2025",
                      "--format", "json", "--no-write", "--bootstrap", "1")
    ours = json.loads(out)
    values = [ours[m]["score"] for m in ("BLEU", "StreamLAAL", "StreamLAAL_CA")]
    (folder / "system-a" / "scores.resegmented.tsv").write_text(_tsv(values), encoding="utf-8")
    (folder / "system-b" / "scores.resegmented.tsv").write_text(_tsv([values[0], values[1] + 1e-6, values[2]]),
                                                                encoding="utf-8")
    (folder / "system-c" / "scores.resegmented.tsv").write_text(_tsv(None), encoding="utf-8")
    rc, out, err = _run("rescore", str(folder), *data, "--target-lang", "de", "--output", str(tmp_path / "site"))
    assert rc == 0, err
    assert "4 runs, 1 of 2 equal to their published 2025 values" in out
    rows = json.loads((tmp_path / "site" / "rescored.json").read_text(encoding="utf-8"))
    assert set(rows) == {"system-a", "system-b", "system-c", "system-d"}
    assert rows["system-a"]["equal_to_published"] is True and rows["system-b"]["equal_to_published"] is False
    assert rows["system-c"]["published"] is None and "equal_to_published" not in rows["system-d"]
    assert rows["system-a"]["profiles"]["iwslt2025"]["StreamLAAL"] == values[1]
    # the 2026 side: LongYAAL as OmniSTEval with --fix_simuleval_emission_ca, StreamLAAL as simulstream
    rc, out, _ = _run("score", str(talks["log"]), *data, "--target-lang", "de", "--fix-simuleval-emission-ca",
                      "--metrics", "BLEU,LongYAAL,StreamLAAL", "--format", "json", "--no-write", "--bootstrap", "1")
    today = json.loads(out)
    for m in ("BLEU", "LongYAAL", "LongYAAL_CA", "StreamLAAL"):
        assert rows["system-d"]["profiles"]["iwslt2026"][m] == today[m]["score"], m
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert page.count("<td class=ok>equal</td>") == 1 and page.count("<td class=bad>differs</td>") == 1
    assert "LongYAAL_CA" in page and "system-d" in page


def test_a_folder_without_logs_is_one_line(tmp_path: Path) -> None:
    rc, _, err = _run("rescore", str(tmp_path), "--segmentation", "x", "--references", "y", "--target-lang", "de",
                      "--output", str(tmp_path / "site"))
    assert rc == 2 and "no instances.log" in err and len(err.strip().splitlines()) == 1
