"""agent_templates/fill_wheels.py: a folder filled for the same requirements is left as it is, without pip (a
re-run of scripts/iwslt2026.sh needs no network); new requirements fill it again. Pip runs for real, offline, on a
wheel made here (PIP_NO_INDEX, PIP_FIND_LINKS)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest

from agent_templates.fill_wheels import STAMP, fill


def _wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A minimal pure-Python wheel `name-version-py3-none-any.whl` with one module (and `requires`)."""
    dist = f"{name}-{version}.dist-info"
    needs = "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {f"{name}.py": b"VALUE = 1\n",
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{needs}".encode(),
             f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()}"
                     f",{len(data)}\n" for path, data in files.items()) + f"{dist}/RECORD,,\n"
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as whl:
        for name_in, data in {**files, f"{dist}/RECORD": record.encode()}.items():
            whl.writestr(name_in, data)
    return path


def _offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wheels: list[tuple[str, str, tuple[str, ...]]],
             requirements: str) -> Path:
    """A submission folder `tmp_path/sub` with `requirements`, and pip pointed at an index holding only `wheels`
    (name, version, requires)."""
    index = tmp_path / "index"
    index.mkdir()
    for name, version, requires in wheels:
        _wheel(index, name, version, requires)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "requirements-image.txt").write_text(requirements, encoding="utf-8")
    return sub


def test_a_filled_folder_is_not_asked_of_pip_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capfd: pytest.CaptureFixture[str]) -> None:
    sub = _offline(tmp_path, monkeypatch, [("tinypkg", "1.0", ())], "tinypkg==1.0\n")
    assert fill(sub) == 0
    assert [p.name for p in (sub / "wheels").glob("*.whl")] == ["tinypkg-1.0-py3-none-any.whl"]
    assert (sub / "wheels" / STAMP).is_file()

    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "nowhere"))  # pip would find nothing now
    capfd.readouterr()
    assert fill(sub) == 0
    assert "up to date" in capfd.readouterr().out

    (sub / "requirements-image.txt").write_text("tinypkg==1.0\notherpkg\n", encoding="utf-8")
    assert fill(sub) != 0  # new requirements: pip is asked, and cannot find otherpkg
    assert not (sub / "wheels" / STAMP).exists()
    assert fill(sub) != 0  # the failed fill left no stamp behind: pip is asked again


def test_requirements_are_resolved_together_as_the_image_installs_them(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`pip install` in the image resolves every requirement at once; so does the fill: a folder of wheels that
    each requirement would resolve alone (two versions of a shared dependency) is not what the image gets."""
    # gamma goes --no-deps: its dependency is never asked for
    sub = _offline(tmp_path, monkeypatch, [("shared", "1.0", ()), ("shared", "2.0", ()), ("alpha", "1.0", ("shared",)),
                                           ("beta", "1.0", ("shared==1.0",)), ("gamma", "1.0", ("missingdep",))],
                   "alpha\ngamma --no-deps\nbeta\n")
    assert fill(sub) == 0
    assert sorted(p.name for p in (sub / "wheels").glob("*.whl")) == [
        "alpha-1.0-py3-none-any.whl", "beta-1.0-py3-none-any.whl", "gamma-1.0-py3-none-any.whl",
        "shared-1.0-py3-none-any.whl"]
