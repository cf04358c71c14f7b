"""Render the static leaderboard site: results directory → SITE/ (index, submission and instance pages,
downloads, bundled CSS/JS). Works offline: every link is relative and nothing refers outside the site.

It only reads files and renders: scores, per-instance metrics and significance come from the scoring stage."""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from harness import __version__, layout
from harness.config import TaskConfig
from harness.errors import HarnessError
from harness.jsonio import write_json
from leaderboard import views
from leaderboard.audio import SiteAudio
from leaderboard.extras import board_extras
from leaderboard.hostpaths import HostPaths, audio_folders, site_host_paths
from leaderboard.metrics_info import Catalog
from leaderboard.model import Board, Results, Run, load_results, slugify
from leaderboard.plots import quality_latency_svg, timeline_svg, window_svg
from leaderboard.replay import RECORDING_TEXT_MAX, replay_data
from leaderboard.safe import page_text
from leaderboard.uncertainty import rank_chars
from leaderboard.versions import versions_of

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"


def environment(catalog: Catalog) -> jinja2.Environment:
    """The jinja2 environment: autoescaping on for every template, undefined names are errors."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=page_text,  # control characters of participants' strings are escaped, as on the terminal
    )
    env.filters["num"] = _num
    env.filters["breakable"] = breakable
    env.filters["file_name"] = file_name
    env.globals["rank_chars"] = rank_chars
    env.globals["describe"] = catalog.describe
    return env


def breakable(name: str) -> Markup:
    """A metric name that a narrow column header may break where a word starts inside it (`Start<wbr>Offset`,
    `Norm<wbr>BLEU`), escaped."""
    return Markup(re.sub(r"(?<=[a-z])(?=[A-Z])", "<wbr>", str(escape(name))))


def file_name(path: Any) -> str:
    """The last name of a path (a recording's file name: the folder it has on the organizer's machine stays off the
    site)."""
    text = str(path).rstrip("/")
    return text.rpartition("/")[2] or text


def _num(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}" if abs(value) >= 1000 else f"{value:.{digits}f}"
    return str(value)


def _check_output(out: Path, results_dir: Path, overwrite: bool) -> None:
    """Refuse `out` when it is not a folder, when it holds anything and `overwrite` is off, or when replacing it
    would remove the results folder the site is made of."""
    if out.exists() and not out.is_dir():
        raise HarnessError(f"{out}: exists and is not a folder; choose a new or empty folder for the site")
    if not out.is_dir() or not any(out.iterdir()):
        return
    if not overwrite:
        raise HarnessError(f"{out}: output folder is not empty; pass --overwrite to replace it with the new site, "
                           f"or choose a new or empty folder")
    place, source = out.resolve(), results_dir.resolve()
    if place == source or place in source.parents:
        raise HarnessError(f"{out}: holds the results folder {results_dir}; --overwrite would remove it, "
                           f"choose another folder for the site")


def _swap_in(fresh: Path, out: Path) -> None:
    """Move the rendered site `fresh` to `out`. A folder already at `out` is moved aside beside `fresh` first and
    put back if `fresh` cannot take its place; the caller removes the staging folder that holds what is left."""
    place = out.resolve()
    if place.exists():
        shutil.copymode(place, fresh)
        aside = fresh.with_name("old")
        place.rename(aside)
        try:
            fresh.rename(place)
        except BaseException:
            aside.rename(place)
            raise
    else:
        fresh.rename(place)


class SiteWriter:
    """Writes the pages of one site."""

    def __init__(self, results: Results, out: Path, instance_pages: bool = True,
                 audio: SiteAudio | None = None, hosts: HostPaths | None = None) -> None:
        self.results = results
        self.out = out
        self.hosts = hosts if hosts is not None else HostPaths()  # host folders cut out of every file written
        self.audio = audio  # None: the site holds no audio (every replay runs silent)
        if audio is not None:
            audio.site = out
        self.env = environment(results.catalog)
        self.instance_pages = instance_pages
        self.generated_at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        self.pages = 0

    def page(self, template: str, rel: str, **ctx: Any) -> None:
        depth = rel.count("/")
        html = self.env.get_template(template).render(
            root="../" * depth, task=self.results.task, summary=self.results.summary, boards=self.results.boards,
            results=self.results,
            harness_version=__version__, generated_at=self.generated_at, **ctx)
        target = self.out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.hosts.text(html), encoding="utf-8")
        self.pages += 1

    def write(self) -> Path:
        shutil.copytree(STATIC, self.out / "static")
        sig: dict[str, dict[str, dict[str, Any]]] = {}
        plots: dict[str, Markup | None] = {}
        for board in self.results.boards:
            sig[board.slug] = board.significance()
            svg = quality_latency_svg(board)
            plots[board.slug] = Markup(svg) if svg else None  # built by leaderboard.svg, every text escaped
        downloads = self.downloads()
        self.page("index.html", "index.html", significance=sig, plots=plots, downloads=downloads,
                  glossary=self.glossary(), invalid=self.results.invalid, **board_extras(self.results))
        if self.results.human:
            self.page("human.html", "human.html", human=self.results.human)
        for board in self.results.boards:
            for run in board.runs:
                self.run_pages(board, run, sig[board.slug].get(run.slug, {}))
        return self.out / "index.html"

    def glossary(self) -> list[Any]:
        keys: list[str] = []
        for board in self.results.boards:
            for k in board.columns:
                if k not in keys:
                    keys.append(k)
        return [self.results.catalog.describe(k) for k in keys]

    def downloads(self) -> dict[str, dict[str, str]]:
        """Per track: summary.json and summary.csv. {track: {"json": path, "csv": path}}."""
        out: dict[str, dict[str, str]] = {}
        (self.out / "downloads").mkdir(exist_ok=True)
        _write_json(self.out / "downloads" / layout.SUMMARY, self.hosts.value(views.public_summary(self.results)))
        for track in dict.fromkeys(b.track for b in self.results.boards):
            folder = self.out / "downloads" / slugify(track)
            folder.mkdir(parents=True, exist_ok=True)
            _write_json(folder / layout.SUMMARY, self.hosts.value(views.track_summary(self.results, track)))
            runs = [r for b in self.results.boards if b.track == track for r in b.runs]
            (folder / "summary.csv").write_text(self.hosts.text(views.track_csv(runs)), encoding="utf-8")
            out[track] = {"json": f"downloads/{slugify(track)}/summary.json",
                          "csv": f"downloads/{slugify(track)}/summary.csv"}
        return out

    def run_pages(self, board: Board, run: Run, significance: dict[str, Any]) -> None:
        records = run.instances()
        self.hosts.add(*audio_folders(records))
        scores = run.instance_scores()
        unit = board.latency_unit or "word"
        per_instance = [(rec, scores.get(rec["index"])) for rec in records]
        latency_keys = [k for k in board.columns if self.results.catalog.describe(k).kind == "latency"]
        base = f"runs/{run.slug}"
        self.page("submission.html", f"{base}/index.html", board=board, run=run,
                  rows=views.score_rows(run, self.results.catalog), significance=significance, best=board.best,
                  counts=views.counts(run), manifest=views.manifest_items(run.manifest), instances=per_instance,
                  latency_keys=latency_keys, instance_pages=self.instance_pages,
                  versions=versions_of(self.results, board, run))
        if not self.instance_pages:
            return
        for n, (rec, metrics) in enumerate(per_instance):
            prev_i = per_instance[n - 1][0].get("index") if n > 0 else None
            next_i = per_instance[n + 1][0].get("index") if n + 1 < len(per_instance) else None
            speech = board.modality == "speech" or isinstance(rec.get("source"), list)
            href = self.audio.href(rec, run.dataset) if self.audio is not None and speech else None
            template, ctx = instance_page(rec, metrics, unit, speech, audio=f"../../../{href}" if href else None)
            self.page(template, f"{base}/instances/{rec.get('index')}.html", board=board, run=run, prev_i=prev_i,
                      next_i=next_i, **ctx)


def instance_page(rec: dict[str, Any], metrics: dict[str, Any] | None, unit: str,
                  speech: bool, audio: str | None = None) -> tuple[str, dict[str, Any]]:
    """The template of one instance's page and its context beyond board, run and pager: a decoding timeline with
    its slider, or for a whole recording (long-form) its sentences and paged timeline; a speech instance or
    recording adds its replay (`audio`: its audio's address relative to the page; None: a silent replay). The
    live viewer (`leaderboard.live`) renders the same pages."""
    if isinstance(rec.get("longform"), dict):
        talk = views.recording(rec, metrics)
        svgs = [Markup(window_svg(w, f"w{w['n']}-plot")) for w in talk["windows"]]
        summary = {k: v for k, v in (metrics or {}).items() if k not in ("index", "sentences", "trailing_units")}
        return "recording.html", {"rec": rec, "talk": talk, "svgs": svgs, "metrics": summary,
                                  "trailing": (metrics or {}).get("trailing_units"),
                                  "replay": replay_data(rec, audio, unit, talk["sentences"], RECORDING_TEXT_MAX)}
    view = views.timeline(rec, unit, speech)
    return "instance.html", {"rec": rec, "metrics": metrics, "view": view, "slider": views.slider_data(view),
                             "timeline": Markup(timeline_svg(view)),
                             "replay": replay_data(rec, audio, unit) if speech else None}


def _write_json(path: Path, data: Any) -> None:
    write_json(path, data, ensure_ascii=False, mkdir=True)


def render_site(results_dir: Path, out: Path, config: TaskConfig | None = None, *,
                instance_pages: bool = True, audio: SiteAudio | None = None,
                overwrite: bool = False, datasets: frozenset[str] | None = None) -> tuple[Path, int]:
    """Read RESULTS, write the site into `out` (with the audio `audio` lets it publish: none by default);
    returns (index.html path, number of pages).

    A non-empty `out` is refused unless `overwrite`. The site is rendered into a staging folder beside `out`
    (`.NAME.harness-*`, on the same file system) and swapped in only once it is complete: a render that fails
    leaves the folder at `out` as it was, and nothing beside it."""
    results = load_results(results_dir, config, datasets)
    _check_output(out, results_dir, overwrite)
    place = out.resolve()
    place.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{place.name}.harness-", dir=place.parent))
    try:
        fresh = staging / "site"
        fresh.mkdir()  # made with the user's umask (mkdtemp's own folder is private)
        hosts = site_host_paths(results.root, config, (r.manifest for r in [*results.runs, *results.invalid]))
        writer = SiteWriter(results, fresh, instance_pages, audio, hosts)
        writer.write()
        _swap_in(fresh, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out / "index.html", writer.pages
