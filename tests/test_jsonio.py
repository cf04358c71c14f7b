"""harness.jsonio: the one JSON reader/writer, its atomic write, and the one JSON-lines reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.jsonio import (
    atomic_path,
    iter_jsonl,
    read_json,
    read_json_or_none,
    read_jsonl,
    write_json,
    write_text_atomic,
)


def test_write_json_keeps_json_dumps_bytes(tmp_path: Path) -> None:
    obj = {"b": "é", "a": [1, 2]}
    out = write_json(tmp_path / "sub" / "x.json", obj, ensure_ascii=False, sort_keys=True, mkdir=True)
    assert out.read_text(encoding="utf-8") == json.dumps(obj, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    write_json(out, obj, indent=None)
    assert out.read_text(encoding="utf-8") == json.dumps(obj) + "\n"
    assert [p.name for p in out.parent.iterdir()] == ["x.json"]  # no temporary file left behind


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "x.json"
    write_json(target, {"old": True})
    with pytest.raises(TypeError):
        write_json(target, {"bad": object()})
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half", encoding="utf-8")
        raise RuntimeError("interrupted")
    assert read_json(target) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_the_target_changes_only_when_the_write_is_whole(tmp_path: Path) -> None:
    target = write_text_atomic(tmp_path / "t.txt", "old\n")
    with atomic_path(target) as tmp:
        tmp.write_text("new\n", encoding="utf-8")
        assert target.read_text(encoding="utf-8") == "old\n"
    assert target.read_text(encoding="utf-8") == "new\n"


def test_read_json_errors_name_the_file_in_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "s.json"
    broken.write_text('{"a": 1,\n', encoding="utf-8")
    for path, words in ((broken, "line 2: scores is not valid JSON"), (tmp_path / "none.json", "scores not found")):
        with pytest.raises(HarnessError) as info:
            read_json(path, "scores")
        assert str(info.value) == f"{path}: {words}" or str(info.value).startswith(f"{path}: {words}")
        assert "\n" not in str(info.value)
        assert read_json_or_none(path) is None


def test_a_long_form_talk_is_assembled_through_the_atomic_writer(tmp_path: Path) -> None:
    import numpy as np
    import soundfile

    from harness.data.longform_build import SAMPLE_RATE, assemble

    wavs = []
    for n in (1, 2):
        wav = tmp_path / f"{n}.wav"
        soundfile.write(str(wav), np.full(SAMPLE_RATE * n // 10, n, dtype=np.int16), SAMPLE_RATE, subtype="PCM_16")
        wavs.append(wav)
    out = tmp_path / "talk" / "talk.wav"
    spans = assemble(wavs, out, seed=1)
    samples, rate = soundfile.read(str(out), dtype="int16")
    assert rate == SAMPLE_RATE and [round(d, 1) for _, d in spans] == [0.1, 0.2]
    assert int((samples == 2).sum()) == SAMPLE_RATE * 2 // 10
    assert [p.name for p in out.parent.iterdir()] == ["talk.wav"]  # no temporary left


def test_read_jsonl_reads_objects_and_names_the_real_line_of_a_bad_one(tmp_path: Path) -> None:
    good = tmp_path / "a.jsonl"
    good.write_text('{"a": 1}\n\n  \n{"b": "\u2028é"}\n', encoding="utf-8")  # U+2028 inside a string is JSON
    assert read_jsonl(good, "rows") == [{"a": 1}, {"b": "\u2028é"}]
    assert [n for n, _ in iter_jsonl(good)] == [1, 4]  # blank lines count
    for text, words in (('{"a": 1}\n\n{"a": \n', "line 3: rows is not valid JSON: Expecting value"),
                        ('{"a": 1}\n[1, 2]\n', "line 2: rows is not a JSON object"),
                        (b"{\"a\": \"\xff\"}\n", "cannot read rows: 'utf-8' codec can't decode")):
        bad = tmp_path / "bad.jsonl"
        bad.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        with pytest.raises(HarnessError) as info:
            read_jsonl(bad, "rows")
        assert str(info.value).startswith(f"{bad}: {words}") and "\n" not in str(info.value)


def test_read_jsonl_of_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "none.jsonl"
    assert read_jsonl(missing, "rows", missing_ok=True) == []
    with pytest.raises(HarnessError, match=r"none.jsonl: rows not found$"):
        read_jsonl(missing, "rows")
