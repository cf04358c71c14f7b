"""Every problem at once, one line each, through the real commands: a track with several mistakes (misspelt keys
and wrong values), a submission.yaml whose misspelt key hid a wrong `track:`, a domain file with several bad lines
(`harness check-config`, `harness check --config`, `harness validate`)."""

from __future__ import annotations

from pathlib import Path

from harness.errors import EXIT_FAILED, EXIT_USAGE
from tests.harness_cli import run_in_checkout as harness

ROOT = Path(__file__).resolve().parent.parent
UDHR = ROOT / "data" / "udhr"


def _config(root: Path, track: str) -> Path:
    """A task config with one text track whose fields (after its name) are `track`, on the bundled UDHR data."""
    cfg = root / "task.yaml"
    cfg.write_text(f"task: t\ntracks:\n  - name: text-en-es\n{track}", encoding="utf-8")
    return cfg


def _expect(lines: list[str], cfg: Path, expected: list[str]) -> None:
    """Each of `expected` is (the start of) exactly one line after `CFG: `, and nothing else is reported."""
    for text in expected:
        assert sum(line.startswith(f"{cfg}: {text}") for line in lines) == 1, (text, "\n".join(lines))
    assert lines[-1] == f"{cfg}: {len(expected)} problems" and len(lines) == len(expected) + 1, "\n".join(lines)


def test_check_config_reports_every_mistake_of_one_track(tmp_path: Path) -> None:
    cfg = _config(tmp_path, f"""    modalty: text
    source_lang: en
    target_lang: es
    latency_unit: words
    tokenizer: 13b
    segmnt_size: 2
    primary: {{quality: BLEUU}}
    regimes: [{{name: low, max_latncy: 4}}, {{name: high, max_latency: 8}}]
    datasets:
      dev: {{sorce: {UDHR / 'dev.en'}, references: {{orig: {UDHR / 'dev.es'}}}}}
      test: {{source: {UDHR / 'test.en'}, references: {{orig: {UDHR / 'test.es'}}}}}
""")
    done = harness("check-config", str(cfg))
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    _expect(done.stdout.splitlines(), cfg, [
        "tracks[0].modalty: unknown field; did you mean 'modality'?",
        "tracks[0].modality: missing required field",
        "tracks[0].latency_unit: 'words' is not one of word, char; did you mean 'word'?",
        "tracks[0].tokenizer: '13b' is not one of",
        "tracks[0].segmnt_size: unknown field; did you mean 'segment_size'?",
        "tracks[0].primary.quality: 'BLEUU' is not one of",
        "tracks[0].regimes[0].max_latncy: unknown field; did you mean 'max_latency'?",
        "tracks[0].regimes[0].max_latency: missing required field",
        "tracks[0].datasets.dev.sorce: unknown field; did you mean 'source'?",
        "tracks[0].datasets.dev.source: missing required field",
    ])


def test_check_config_reports_every_wrong_value_of_limits_and_of_a_dataset(tmp_path: Path) -> None:
    cfg = _config(tmp_path, f"""    modality: text
    source_lang: en
    target_lang: es
    segment_size: 0
    computation_aware: maybe
    datasets:
      dev: {{source: {UDHR / 'dev.en'}, references: {{}}, source_text: 3, context: [a]}}
limits: {{cpus: many, memory: 2q, pids: lots}}
""")
    done = harness("check-config", str(cfg))
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    _expect(done.stdout.splitlines(), cfg, [
        "tracks[0].segment_size: must be positive",
        "tracks[0].computation_aware: expected bool, got str 'maybe'",
        "tracks[0].datasets.dev.references: at least one reference set is required",
        "tracks[0].datasets.dev.source_text: expected str, got int 3",
        "tracks[0].datasets.dev.context: expected str, got list ['a']",
        "limits.cpus: expected float, got str 'many'",
        "limits.memory: ",
        "limits.pids: expected int, got str 'lots'",
    ])


def test_the_first_problem_is_still_the_one_a_run_is_refused_with(tmp_path: Path) -> None:
    """Commands about to run stop at the first problem, one line (the single-error API)."""
    cfg = _config(tmp_path, f"""    modality: text
    source_lang: en
    target_lang: es
    latency_unit: words
    tokenizer: 13b
    datasets:
      dev: {{source: {UDHR / 'dev.en'}, references: {{orig: {UDHR / 'dev.es'}}}}}
""")
    agent = ROOT / "agent_templates" / "waitk_apertium" / "agent.py"
    done = harness("run", "--config", str(cfg), "--track", "text-en-es", "--dataset", "dev", "--agent", str(agent),
                   "--output", str(tmp_path / "run"))
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert done.stderr.strip() == (f"harness run: error: {cfg}: tracks[0].latency_unit: 'words' is not one of word, "
                                   "char; did you mean 'word'?"), done.stderr


def test_check_reports_a_wrong_track_beside_a_misspelt_key(tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "Dockerfile").write_text("FROM scratch\n", encoding="utf-8")
    yml = sub / "submission.yaml"
    yml.write_text("team: t\nsystem: s\ntrack: text-en-fr\nknd: primary\nbuild: {dockerfile: Dockerfile}\n"
                   "command: python3 agent.py\n", encoding="utf-8")
    done = harness("check", str(sub), "--config", str(ROOT / "configs" / "demo.yaml"), "--no-docker")
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    expected = [f"error: {yml}: knd: unknown field; did you mean 'kind'?",
                f"error: {yml}: track: 'text-en-fr' is not a track of {ROOT / 'configs' / 'demo.yaml'}"]
    for text in expected:
        assert sum(line.startswith(text) for line in lines) == 1, (text, done.stdout)
    assert lines[-1] == f"{sub}: 2 problems", done.stdout


def _domains_config(root: Path, lines: str) -> Path:
    """A text track whose dev set (the 40 UDHR lines) has the domain file `lines`."""
    (root / "domains.txt").write_text(lines, encoding="utf-8")
    return _config(root, f"""    modality: text
    source_lang: en
    target_lang: es
    datasets:
      dev: {{source: {UDHR / 'dev.en'}, references: {{orig: {UDHR / 'dev.es'}}}, domains: {{file: domains.txt}}}}
""")


def test_check_config_reports_every_bad_line_of_a_domain_file(tmp_path: Path) -> None:
    cfg = _domains_config(tmp_path, "1-10 news\n11\n12-20 ta!lk\n21-30 talks extra\n31-35 news\n")
    done = harness("check-config", str(cfg))
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    domains = tmp_path / "domains.txt"
    where = f"tracks[0].datasets.dev.domains: {domains}"
    _expect(done.stdout.splitlines(), cfg, [
        f"{where}: line 2: expected a recording and its domain, got 1 field(s)",
        f"{where}: line 3: 'ta!lk' is not a domain name",
        f"{where}: line 4: expected a recording and its domain, got 3 field(s)",
        f"{where}: 5 recording(s) of the dataset have no domain (first: 36)",
    ])


def test_validate_refuses_a_domain_file_with_its_first_problem_and_how_many_more(tmp_path: Path) -> None:
    """A command about to score a dataset stops at the first problem of its domain file, in one line that says how
    many more there are and which command lists them."""
    cfg = _domains_config(tmp_path, "1-20 news\n21\n22-40 ta!lk\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "submission.yaml").write_text("team: t\nsystem: s\ntrack: text-en-es\nlogs: {dev: dev.log}\n"
                                         "hardware: cpu\n", encoding="utf-8")
    (sub / "dev.log").write_text("", encoding="utf-8")
    done = harness("validate", str(sub), "--config", str(cfg), "--dataset", "dev", "--output", str(tmp_path / "o"))
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    domains = tmp_path / "domains.txt"
    assert done.stderr == (f"harness validate: error: {cfg}: tracks[0].datasets.dev.domains: {domains}: line 2: "
                           f"expected a recording and its domain, got 1 field(s) (and 1 more: `harness check-config "
                           f"{cfg}` lists every one)\n"), done.stderr
