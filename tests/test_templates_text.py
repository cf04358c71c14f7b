"""The Apertium text baselines: the translator wrapper, policy invariants, and the acceptance runs.

Acceptance: every text template evaluates the first sentences of the bundled UDHR dev set through `harness run` and
through `harness server` + `harness client --transport http` with identical predictions, delays and scores.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from harness.client.agent import AgentStates, ReadAction, ReviseAction, WriteAction
from harness.intake.submission import load_submission
from tests.templates_util import ROOT, TEMPLATES, comparable_scores, demo_text_dev, http_run, joint_run, records

pytestmark = pytest.mark.apertium

TEXT_TEMPLATES = ("waitk_apertium", "local_agreement", "retranslation", "simuleval_waitk")
DEV = (ROOT / "data" / "udhr" / "dev.en").read_text(encoding="utf-8").splitlines()
#: the dev sentences each template translates in-process and over HTTP
ACCEPTANCE_SENTENCES = 6


def _module(path: Path, name: str):
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def mt():
    from harness.baselines.apertium import Apertium

    translator = Apertium()
    yield translator
    translator.close()


def test_persistent_pipeline_matches_one_apertium_call_per_sentence(mt) -> None:
    tricky = "Price: $5 [approx] a/b @home <tag> {x} 50% #1 *star* a+b ~x |y c:\\path ^caret"
    for text in (DEV[0], DEV[7], " ".join(DEV[3].split()[:6]), tricky):
        once = subprocess.run(["apertium", "-u", "eng-spa"], input=text + "\n", capture_output=True, text=True,
                              check=True).stdout
        assert mt.translate(text) == " ".join(once.split())
    assert mt._persistent, "the persistent pipeline fell back to one process per call"


def test_identical_prefixes_are_served_from_the_cache(mt) -> None:
    calls, hits = mt.calls, mt.hits
    first = mt.translate("Everyone has the right to life")
    again = mt.translate("  Everyone has the   right to life ")
    assert first == again and first.startswith("Todo")
    assert mt.calls == calls + 1 and mt.hits == hits + 1


def _decode(agent, words: list[str], limit: int = 10_000) -> tuple[AgentStates, list[tuple[int, object]]]:
    """Drive `agent.decide` like the runner does; returns the states and (words read, action) per write."""
    states = agent.build_states()
    writes = []
    for _ in range(limit):
        action = agent.decide(states)
        if isinstance(action, ReadAction):
            assert not (states.source_finished and len(states.source) == len(words)), "read past the end"
            states.source.append(words[len(states.source)])
            states.source_finished = len(states.source) == len(words)
            continue
        writes.append((len(states.source), action))
        if isinstance(action, ReviseAction):
            states.target = action.content.split()
        else:
            states.target.extend(action.content.split())
        if action.finished:
            return states, writes
    raise AssertionError("the agent did not finish")


def _agent(name: str, **options):
    module = _module(TEMPLATES / name / "agent.py", f"template_{name}")
    cls = [c for c in vars(module).values() if isinstance(c, type) and c.__module__ == module.__name__
           and hasattr(c, "policy")][0]
    return cls(argparse.Namespace(**options))


@pytest.mark.parametrize("k", [1, 3, 5])
def test_waitk_keeps_the_lag_and_ends_with_the_full_translation(mt, k: int) -> None:
    agent = _agent("waitk_apertium", waitk=k, apertium_pair="eng-spa")
    for line in DEV[:4]:
        words = line.split()
        states, writes = _decode(agent, words)
        written = 0
        for read, action in writes[:-1]:
            assert isinstance(action, WriteAction) and len(action.content.split()) == 1
            assert read - written >= k  # the source is k words ahead whenever a word is written
            written += 1
        assert writes[-1][1].finished and writes[-1][0] == len(words)
        full = mt.translate(line).split()
        assert states.target[written:] == full[written:]


def test_local_agreement_writes_only_agreed_prefixes(mt) -> None:
    agent = _agent("local_agreement", chunk=1, apertium_pair="eng-spa")
    words = DEV[1].split()
    states, writes = _decode(agent, words)
    written = 0
    for read, action in writes[:-1]:
        now = mt.translate(" ".join(words[:read])).split()
        before = mt.translate(" ".join(words[:read - 1])).split()
        n = 0
        while n < min(len(now), len(before)) and now[n] == before[n]:
            n += 1
        assert n > written and action.content.split() == now[written:n]  # exactly the newly agreed words
        written = n
    assert writes[-1][1].finished and len(writes) > 2


def test_retranslation_revises_to_the_translation_of_each_prefix(mt) -> None:
    agent = _agent("retranslation", apertium_pair="eng-spa")
    words = DEV[2].split()
    states, writes = _decode(agent, words)
    assert all(isinstance(a, ReviseAction) for _, a in writes)
    for read, action in writes:
        assert action.content == mt.translate(" ".join(words[:read]))
    assert writes[-1][1].finished and " ".join(states.target) == mt.translate(DEV[2])


@pytest.mark.parametrize("name", (*TEXT_TEMPLATES, "whisper_cascade"))
def test_submission_files_are_valid(name: str) -> None:
    sub = load_submission(TEMPLATES / name / "submission.yaml")
    assert not sub.baseline and sub.track in ("text-en-es", "speech-en-es")
    assert "--agent agent.py" in sub.command[-1] and "$HARNESS_SERVER_URL" in sub.command[-1]
    dockerfile = (TEMPLATES / name / "Dockerfile").read_text()
    assert dockerfile.startswith("#") and "FROM harness-base:latest" in dockerfile
    assert "COPY agent.py /app/" in dockerfile
    assert (TEMPLATES / name / "README.md").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("name", TEXT_TEMPLATES)
def test_template_scores_the_same_in_process_and_over_http(name: str, tmp_path: Path) -> None:
    agent = TEMPLATES / name / "agent.py"
    joint, http = tmp_path / "joint", tmp_path / "http"
    config = demo_text_dev(tmp_path / "task", ACCEPTANCE_SENTENCES)
    joint_run(config, "text-en-es", agent, joint)
    http_run(config, "text-en-es", agent, http)
    a, b = records(joint), records(http)
    assert len(a) == ACCEPTANCE_SENTENCES and a == b
    assert all(status == "ok" for _, _, status, _ in a.values())
    scores = comparable_scores(joint)
    assert scores == comparable_scores(http)
    assert 10 < scores["BLEU"]["score"] < 60 and 0 < scores["LAAL"]["score"] < 10
    if name == "retranslation":
        assert "NE" in scores and scores["NE"]["score"] > 0
