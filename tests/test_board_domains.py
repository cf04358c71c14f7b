"""Results per domain (issue 35, deliverable 3), through `harness check-config`, `harness evaluate`, `harness score`
and `harness leaderboard` on the bundled UDHR text (log submissions: no Docker engine is needed).

The test set's 20 lines carry three domains (lines 1–8 `preamble`, 9–16 `articles`, 17–20 `yodas`, optional).
Each domain's scores must be exactly what `harness score` gives for a log of that domain's instances alone, the
top-level (ranked) scores those of the main domains' instances, and the board's order must not move with the
optional domain."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.config import load_config
from harness.errors import ConfigError
from tests.board_support import UDHR, domain_file, harness, text_config, text_submission

DOMAINS = {"1-8": "preamble", "9-16": "articles", "17-20": "yodas"}
SPANS = {"preamble": range(0, 8), "articles": range(8, 16), "yodas": range(16, 20)}
COMPARED = ("BLEU", "chrF", "AL", "LAAL")


def scores_of(results: Path, sub: str, dataset: str = "test") -> dict[str, Any]:
    return json.loads((results / sub / dataset / "scores.json").read_text(encoding="utf-8"))


def score_subset(run_log: Path, indices: range | list[int], folder: Path) -> dict[str, Any]:
    """`harness score` of the run's own instances.log cut down to `indices`."""
    folder.mkdir(parents=True, exist_ok=True)
    keep = set(indices)
    lines = [line for line in run_log.read_text(encoding="utf-8").splitlines() if json.loads(line)["index"] in keep]
    (folder / "instances.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = harness("score", str(folder / "instances.log"), "--format", "json", "--no-write")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One batch under a config with an optional domain, the same logs under one without it, and the site."""
    root = tmp_path_factory.mktemp("domains")
    listed = domain_file(root / "test.domains", DOMAINS)
    config = text_config(root, {"file": str(listed), "optional": ["yodas"]})
    plain = text_config(root, {"file": str(listed)}, name="all-main.yaml")
    subs = root / "subs"
    # perfect on the main domains, half the words on yodas; and a few words short on the main domains only
    text_submission(subs / "mainbest", team="mainteam", k=2, drop_every=2, drop_lines=(17, 20))
    text_submission(subs / "yodasbest", team="yodasteam", k=2, drop_every=12, drop_lines=(1, 16))
    text_submission(subs / "slow", team="slowteam", k=4, drop_every=3)
    results, results_plain = root / "results", root / "results-plain"
    for cfg, out in ((config, results), (plain, results_plain)):
        run = harness("evaluate", str(subs), "--config", str(cfg), "--output", str(out), "--dataset", "test")
        assert run.returncode == 0, run.stdout + run.stderr
    site = root / "site"
    made = harness("leaderboard", str(results), "--config", str(config), "--output", str(site))
    assert made.returncode == 0, made.stderr
    return {"root": root, "results": results, "plain": results_plain, "site": site, "config": config}


@pytest.mark.slow
def test_each_domain_is_scored_as_its_instances_alone_with_intervals(campaign: dict[str, Path]) -> None:
    scores = scores_of(campaign["results"], "slow")
    assert list(scores["domains"]) == ["preamble", "articles", "yodas"]
    for name, span in SPANS.items():
        domain = scores["domains"][name]
        assert domain["optional"] is (name == "yodas")
        assert domain["counts"]["instances"] == len(span)
        alone = score_subset(campaign["results"] / "slow" / "test" / "instances.log", span,
                             campaign["root"] / "alone" / name)
        for key in COMPARED:
            assert domain[key]["score"] == alone[key]["score"], (name, key)
            assert domain[key]["ci95"] == alone[key]["ci95"] and len(domain[key]["ci95"]) == 2, (name, key)
            assert domain[key]["signature" if key in ("BLEU", "chrF") else "unit"] == alone[key][
                "signature" if key in ("BLEU", "chrF") else "unit"]


@pytest.mark.slow
def test_optional_domains_stay_out_of_the_ranked_scores_and_the_paired_tests(campaign: dict[str, Path]) -> None:
    results = campaign["results"]
    scores = scores_of(results, "slow")
    main = score_subset(results / "slow" / "test" / "instances.log", range(16), campaign["root"] / "main")
    assert scores["info"]["main_domains"] == ["preamble", "articles"]
    assert scores["counts"]["instances"] == 16
    for key in COMPARED:
        assert scores[key]["score"] == main[key]["score"] and scores[key]["ci95"] == main[key]["ci95"]
    summary = {r["submission"]: r for r in json.loads((results / "summary.json").read_text())["runs"]}
    assert summary["slow"]["scores"]["BLEU"]["score"] == main["BLEU"]["score"]
    sig = json.loads((results / "significance" / "text-en-es" / "test.json").read_text())
    assert sig["best"] == "mainbest"  # perfect on the main domains: yodas never counts
    assert {t["BLEU"]["instances"] for t in sig["runs"].values()} == {16}
    # every instance keeps its page's metrics, yodas included
    rows = (results / "slow" / "test" / "instance_scores.jsonl").read_text().splitlines()
    assert [json.loads(r)["index"] for r in rows] == list(range(20))


@pytest.mark.slow
def test_without_optional_domains_the_order_is_the_whole_sets(campaign: dict[str, Path]) -> None:
    """The two top systems swap when yodas counts: the optional mark is what keeps the main ranking."""
    optional = {s: scores_of(campaign["results"], s)["BLEU"]["score"] for s in ("mainbest", "yodasbest")}
    whole = {s: scores_of(campaign["plain"], s)["BLEU"]["score"] for s in ("mainbest", "yodasbest")}
    assert optional["mainbest"] > optional["yodasbest"]
    assert whole["mainbest"] < whole["yodasbest"]
    plain = scores_of(campaign["plain"], "slow")
    assert "main_domains" not in plain["info"] and plain["counts"]["instances"] == 20
    assert not any(d["optional"] for d in plain["domains"].values())


@pytest.mark.slow
def test_a_dataset_without_domains_scores_as_before(tmp_path: Path) -> None:
    """No `domains` key anywhere; and a one-domain dataset's top-level scores are exactly the plain ones."""
    subs = tmp_path / "subs"
    text_submission(subs / "one", team="oneteam", k=3, drop_every=5)
    outs = {}
    for name, domains in (("none", None), ("single", {"name": "udhr"})):
        cfg = text_config(tmp_path / name, domains)
        out = tmp_path / name / "results"
        run = harness("evaluate", str(subs), "--config", str(cfg), "--output", str(out), "--dataset", "test")
        assert run.returncode == 0, run.stdout + run.stderr
        outs[name] = scores_of(out, "one")
    assert "domains" not in outs["none"] and "main_domains" not in outs["none"]["info"]
    single = dict(outs["single"])
    assert single.pop("domains")["udhr"]["counts"]["instances"] == 20
    for scores in (single, outs["none"]):  # the log each was scored from: the one thing that differs
        scores["info"]["source"] = Path(scores["info"]["source"]).name
    assert json.dumps(single, sort_keys=True) == json.dumps(outs["none"], sort_keys=True)


@pytest.mark.slow
def test_board_shows_domain_tables_apart_and_a_plot_per_domain(campaign: dict[str, Path]) -> None:
    html = (campaign["site"] / "index.html").read_text(encoding="utf-8")
    main_table = html.split("Results per domain", 1)[1].split("</table>", 1)[0]
    optional_table = html.split("Optional domains", 1)[1].split("</table>", 1)[0]
    def heads(table: str) -> list[str]:
        return re.findall(r'class="domain-name">([^ <]+)', table)

    assert heads(main_table) == ["preamble", "articles"] and heads(optional_table) == ["yodas"]
    # the domain table keeps the board's order (main ranking), whatever yodas says
    order = re.findall(r'class="team">([^<]+)</a>', optional_table)
    assert order == ["mainteam", "yodasteam", "slowteam"]
    yodas = scores_of(campaign["results"], "yodasbest")["domains"]["yodas"]["BLEU"]["score"]
    assert f"{yodas:.2f}" in optional_table.split("yodasteam", 1)[1].split("</tr>", 1)[0]
    switch = html.split('class="domain-switch"', 1)[1].split("</figure>", 1)[0]
    assert re.findall(r'<input type="radio"[^>]*value="([^"]+)"', switch) == ["main", "preamble", "articles",
                                                                              "yodas"]
    assert len(re.findall(r"<svg[^>]*class=\"plot\"", switch)) == 4
    assert 'id="plot-text-en-es-test--yodas"' in switch


@pytest.mark.parametrize("domains, field, message", [
    ({"name": "a", "file": "x"}, "domains", "either `name`"),
    ({"name": "a b"}, "domains.name", "is not a domain name"),
    ({"name": "a", "optional": ["a"]}, "domains.optional", "true or false"),
    ({"file": "d.txt", "optional": True}, "domains.optional", "a list of domain names"),
    ({"fil": "d.txt"}, "domains.fil", "did you mean 'file'"),
])
def test_bad_domain_fields_are_one_line_naming_the_field(tmp_path: Path, domains: Any, field: str,
                                                         message: str) -> None:
    (tmp_path / "d.txt").write_text("1-20 a\n", encoding="utf-8")
    cfg = text_config(tmp_path, domains)
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    line = str(err.value)
    assert "\n" not in line and f"tracks[0].datasets.test.{field}" in line and message in line, line


def test_check_config_lists_every_domain_file_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.domains"
    bad.write_text("1-8 news\n9 news extra\n8 sports\n30 far\n10-12 bad/name\n", encoding="utf-8")
    cfg = text_config(tmp_path, {"file": str(bad), "optional": ["yodas"]})
    out = harness("check-config", str(cfg))
    assert out.returncode != 0
    lines = [line for line in out.stdout.splitlines() + out.stderr.splitlines() if "domains" in line]
    prefix = f"{cfg}: tracks[0].datasets.test.domains: {bad}: "
    expected = [prefix + "line 2: expected a recording and its domain, got 3 field(s)",
                prefix + "line 3: 8 already has a domain (news)",
                prefix + "line 4: line 30 is outside the source's 20 lines",
                prefix + "line 5: 'bad/name' is not a domain name (letters, digits, '.', '_', '-')",
                prefix + "8 recording(s) of the dataset have no domain (first: 13)",  # no line names 13-20
                prefix + "no recording has the optional domain 'yodas' (domains: news)"]
    assert lines == expected, out.stdout + out.stderr


def test_check_config_reads_a_speech_lists_recordings_by_name(tmp_path: Path) -> None:
    """A speech dataset names its recordings as its list does (path, file name or stem); one left out is a line."""
    speech = load_config(Path(__file__).resolve().parent.parent / "configs" / "demo.yaml").track("speech-en-es")
    names = [Path(p).name for p in speech.dataset("dev").source.read_text().split()]
    listed = tmp_path / "dev.domains"
    listed.write_text("".join(f"{Path(n).stem if i % 2 else n}\t{'odd' if i % 2 else 'even'}\n"
                              for i, n in enumerate(names[:-1])), encoding="utf-8")
    raw = {"task": "t", "tracks": [{"name": "s", "modality": "speech", "source_lang": "en", "target_lang": "es",
                                    "datasets": {"dev": {"source": str(speech.dataset("dev").source),
                                                         "references": str(UDHR / "dev.es"),
                                                         "domains": {"file": str(listed)}}}}]}
    cfg = tmp_path / "speech.yaml"
    cfg.write_text(json.dumps(raw), encoding="utf-8")
    out = harness("check-config", str(cfg))
    lines = [line for line in out.stdout.splitlines() + out.stderr.splitlines() if "domains" in line]
    assert lines == [f"{cfg}: tracks[0].datasets.dev.domains: {listed}: 1 recording(s) of the dataset have no "
                     f"domain (first: {names[-1]})"], out.stdout + out.stderr
    listed.write_text(listed.read_text() + f"{names[-1]} even\n", encoding="utf-8")
    assert not [line for line in harness("check-config", str(cfg)).stdout.splitlines() if "domains" in line]


def test_evaluate_stops_before_any_run_on_a_bad_domain_file(tmp_path: Path) -> None:
    bad = domain_file(tmp_path / "t.domains", {"1-19": "main"})
    cfg = text_config(tmp_path, {"file": str(bad)})
    text_submission(tmp_path / "subs" / "one", team="oneteam")
    out = harness("evaluate", str(tmp_path / "subs"), "--config", str(cfg), "--output", str(tmp_path / "res"),
                  "--dataset", "test")
    assert out.returncode != 0
    assert (f"{cfg}: tracks[0].datasets.test.domains: {bad}: 1 recording(s) of the dataset have no domain "
            "(first: 20)") in out.stderr
    assert not (tmp_path / "res" / "one").exists()


@pytest.mark.slow
def test_harness_run_writes_per_domain_scores_and_checks_the_file_first(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Joint mode (`harness run`, in process) scores its run per domain as the batch does."""
    from harness.cli import main

    agent = Path(__file__).resolve().parent / "agents" / "echo_text.py"
    listed = domain_file(tmp_path / "test.domains", {"1-10": "first", "11-20": "second"})
    cfg = text_config(tmp_path, {"file": str(listed), "optional": ["second"]})
    out = tmp_path / "run"
    assert main(["run", "--config", str(cfg), "--dataset", "test", "--agent", str(agent), "--output", str(out)]) == 0
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert scores["counts"]["instances"] == 10 and scores["info"]["main_domains"] == ["first"]
    assert {n: (d["optional"], d["counts"]["instances"]) for n, d in scores["domains"].items()} == {
        "first": (False, 10), "second": (True, 10)}
    assert scores["domains"]["second"]["AL"]["ci95"] and scores["domains"]["first"]["BLEU"]["signature"]
    domain_file(listed, {"1-10": "first", "11-21": "second"})
    capsys.readouterr()
    assert main(["run", "--config", str(cfg), "--dataset", "test", "--agent", str(agent), "--output",
                 str(tmp_path / "again")]) != 0
    err = capsys.readouterr().err
    assert f"{cfg}: tracks[0].datasets.test.domains: {listed}: line 3: line 11-21 is outside the source's 20 lines" \
        in err, err
    assert not (tmp_path / "again" / "instances.log").exists()
