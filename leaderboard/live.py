"""`harness view`: a local, read-only viewer of a results folder or of one run folder, live while it runs.

The SimulEval paper's `simuleval server --visual --log-dir` (port 7777), which its project never shipped:

- a **results folder** (it has summary.json) is served as the leaderboard site, rendered into a private folder and
  rendered again only when summary.json or a run's log or scores changed (checked at most every `RECHECK_S`), not
  per request;
- a **run folder** (an instances.log, the harness's or SimulEval's) is served on the leaderboard's own templates: an
  index of its instances with each one's state and, once the run is scored, its per-instance scores; and each
  instance on the leaderboard's instance page (source, references, timeline with its legend and slider, writes),
  with the run's state added. The state is `running` (fewer instances than the run expects and its log grew
  lately), `finished`, or `stopped`; while running, `/live.js` polls `/status.json` and reloads the index when an
  instance lands. An instance page is kept once rendered after the run stopped running, until the run is scored again.

It binds 127.0.0.1 unless `--host` says otherwise, answers GET only, and a path outside the folder is a 404.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import tornado.web

from harness import __version__, layout
from harness.errors import HarnessError
from harness.jsonio import read_json_or_none, read_jsonl
from harness.runlog.live import scan
from harness.runmeta import read_run_meta
from leaderboard.metrics_info import Catalog
from leaderboard.render import STATIC, environment, instance_page, render_site

__all__ = ["make_app", "serve_view", "RECHECK_S", "RUNNING_WINDOW_S"]

RECHECK_S = 1.0
RUNNING_WINDOW_S = 120.0  # a log that grew within this is a run still going

#: served as /live.js: reloads the run's index when an instance lands or the run stops running
POLL_JS = """(function () {
  var el = document.getElementById("run-state");
  if (!el || el.dataset.state !== "running") { return; }
  var seen = Number(el.dataset.instances);
  function poll() {
    fetch("/status.json", {cache: "no-store"}).then(function (r) { return r.json(); }).then(function (s) {
      if (s.instances !== seen || s.state !== "running") { location.reload(); return; }
      setTimeout(poll, 1000);
    }).catch(function () { setTimeout(poll, 2000); });
  }
  setTimeout(poll, 1000);
})();
"""


class _Label:
    """What the leaderboard's page frame names (a board's track, a run's team and system), for a bare run folder."""

    def __init__(self, name: str, meta: dict[str, Any]) -> None:
        self.track = str(meta.get("track") or "")
        self.slug = ""
        self.config = None
        self.team = str(meta.get("submission") or name)
        self.system = ""
        self.submission = self.team


class RunFolder:
    """One run folder as the viewer shows it, on the leaderboard's templates: records read tolerantly, instance
    pages rendered once per instance (a logged instance never changes) and kept."""

    def __init__(self, path: Path) -> None:
        self.run = layout.RunDir(path)
        self.pages: dict[int, tuple[tuple[int | None, ...], str]] = {}
        self.lock = threading.Lock()

    def scored_stamp(self) -> tuple[int | None, ...]:
        """When the run's scores were last written (None: not yet): a kept page older than this is rendered again,
        so an instance page shows the metrics of a `harness score` that ran after it was first shown."""
        return tuple(f.stat().st_mtime_ns if f.exists() else None for f in (self.run.scores, self.run.instance_scores))

    def status(self) -> dict[str, Any]:
        found = scan(self.run.instances_log)
        expected = read_run_meta(self.run).get("expected_instances") if self.run.run_meta.exists() else None
        log = self.run.instances_log
        recent = log.exists() and time.time() - log.stat().st_mtime < RUNNING_WINDOW_S
        if isinstance(expected, int) and len(found.statuses) >= expected:
            state = "finished"
        elif isinstance(expected, int):
            state = "running" if recent or not log.exists() else "stopped"
        else:
            done = self.run.scores.exists() or (self.run.path / "scores.tsv").exists()  # ours, or SimulEval's
            state = "finished" if done else ("running" if recent else "stopped")
        return {"instances": len(found.statuses), "expected": expected, "state": state}

    def records(self) -> dict[int, dict[str, Any]]:
        return scan(self.run.instances_log, keep_records=True).records

    def instance_scores(self) -> dict[int, dict[str, Any]]:
        """Per-instance metrics by index, once the run is scored ({} before)."""
        rows = read_jsonl(self.run.instance_scores, "per-instance scores", missing_ok=True)
        return {r["index"]: {k: v for k, v in r.items() if k != "index"} for r in rows
                if isinstance(r.get("index"), int)}

    def _render(self, template: str, root: str, **ctx: Any) -> str:
        scores = read_json_or_none(self.run.scores)
        env = environment(Catalog([scores] if isinstance(scores, dict) else []))
        meta = read_run_meta(self.run) if self.run.run_meta.exists() else {}
        return env.get_template(template).render(
            root=root, task=str(meta.get("task") or self.run.path.name), summary={"config_sha256": None},
            boards=[], harness_version=__version__, generated_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            **ctx)

    def index_html(self) -> str:
        recs = self.records()
        scores = self.instance_scores()
        columns = list(dict.fromkeys(k for row in scores.values() for k in row
                                     if not isinstance(row[k], (dict, list))))
        return self._render("live_run.html", "", name=self.run.path.name, live=self.status(), columns=columns,
                            rows=[(recs[i], scores.get(i)) for i in sorted(recs)])

    def instance_html(self, index: int) -> str | None:
        stamp = self.scored_stamp()
        with self.lock:
            kept = self.pages.get(index)
            if kept is not None and kept[0] == stamp:
                return kept[1]
        recs = self.records()
        rec = recs.get(index)
        if rec is None:
            return None
        unit = str(rec.get("latency_unit") or "word")
        page, ctx = instance_page(rec, self.instance_scores().get(index), unit,
                                  isinstance(rec.get("source"), list) or unit == "ms")
        order = sorted(recs)
        at = order.index(index)
        label = _Label(self.run.path.name, read_run_meta(self.run) if self.run.run_meta.exists() else {})
        live = self.status()
        html = self._render("live_page.html", "../", page=page, board=label, run=label, live=live,
                            prev_i=order[at - 1] if at > 0 else None,
                            next_i=order[at + 1] if at + 1 < len(order) else None, **ctx)
        if live["state"] != "running":  # while the run goes on, the page's state and pager still change
            with self.lock:
                self.pages[index] = (stamp, html)
        return html


class ResultsSite:
    """A results folder rendered into a private site folder, rendered again when its files changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.site = Path(tempfile.mkdtemp(prefix="harness-view-"))
        self.stamp: tuple[tuple[str, int], ...] | None = None
        self.checked = 0.0
        self.lock = threading.Lock()
        self.renders = 0

    def _stamp(self) -> tuple[tuple[str, int], ...]:
        """When summary.json and each run's log and scores were last written (a `harness score` of one run too)."""
        files = [layout.ResultsDir(self.path).summary]
        for name in (layout.INSTANCES_LOG, layout.SCORES, layout.INSTANCE_SCORES):
            files += sorted(self.path.glob(f"*/*/{name}"))
        return tuple((str(f), f.stat().st_mtime_ns) for f in files if f.exists())

    def current(self) -> Path:
        with self.lock:
            now = time.monotonic()
            if self.stamp is None or now - self.checked >= RECHECK_S:
                self.checked = now
                stamp = self._stamp()
                if stamp != self.stamp:
                    out = self.site / f"r{self.renders}"
                    render_site(self.path, out)
                    old = self.site / f"r{self.renders - 1}"
                    self.renders += 1
                    self.stamp = stamp
                    if old.exists():
                        shutil.rmtree(old, ignore_errors=True)
            return self.site / f"r{self.renders - 1}"


def _inside(root: Path, rel: str) -> Path | None:
    """`root/rel` if it stays inside `root` and is a file, else None."""
    target = (root / rel).resolve()
    root = root.resolve()
    if target != root and root not in target.parents:
        return None
    return target if target.is_file() else None


class _Base(tornado.web.RequestHandler):
    def set_default_headers(self) -> None:
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")

    def _file(self, path: Path | None) -> None:
        if path is None:
            raise tornado.web.HTTPError(404)
        types = {".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "application/javascript",
                 ".json": "application/json", ".svg": "image/svg+xml", ".csv": "text/csv; charset=utf-8"}
        self.set_header("Content-Type", types.get(path.suffix, "application/octet-stream"))
        self.write(path.read_bytes())


class RunHandler(_Base):
    def initialize(self, folder: RunFolder) -> None:
        self.folder = folder

    def get(self, rel: str) -> None:
        if rel in ("", "index.html"):
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.write(self.folder.index_html())
        elif rel == "status.json":
            self.write(self.folder.status())
        elif rel == "live.js":
            self.set_header("Content-Type", "application/javascript")
            self.write(POLL_JS)
        elif rel.startswith("static/"):
            self._file(_inside(STATIC, rel.removeprefix("static/")))
        elif rel.startswith("instances/") and rel.endswith(".html") and rel[10:-5].isdigit():
            page = self.folder.instance_html(int(rel[10:-5]))
            if page is None:
                raise tornado.web.HTTPError(404)
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.write(page)
        else:
            raise tornado.web.HTTPError(404)


class SiteHandler(_Base):
    def initialize(self, site: ResultsSite) -> None:
        self.site = site

    def get(self, rel: str) -> None:
        root = self.site.current()
        self._file(_inside(root, rel or "index.html"))


def make_app(path: Path) -> tornado.web.Application:
    """The viewer's application for a results folder or a run folder."""
    path = Path(path)
    if layout.ResultsDir(path).summary.is_file():
        return tornado.web.Application([(r"/(.*)", SiteHandler, {"site": ResultsSite(path)})])
    if layout.RunDir(path).instances_log.exists() or (path / "config.yaml").is_file() or \
            layout.RunDir(path).run_meta.exists():
        return tornado.web.Application([(r"/(.*)", RunHandler, {"folder": RunFolder(path)})])
    raise HarnessError(f"{path}: neither a results folder (summary.json) nor a run folder (instances.log)")


def serve_view(path: Path, host: str, port: int) -> int:
    """Serve until interrupted."""
    import asyncio

    app = make_app(path)

    async def main() -> None:
        app.listen(port, address=host)
        print(f"harness view: http://{host}:{port}/ ({path})", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())
    return 0
