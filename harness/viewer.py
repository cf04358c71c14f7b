"""`harness view`: a local, read-only viewer of a results folder or of one run folder, live while it runs.

The SimulEval paper's `simuleval server --visual --log-dir` (port 7777), which its project never shipped:

- a **results folder** (it has summary.json) is served as the leaderboard site, rendered into a private folder and
  rendered again only when summary.json or a run log changed (checked at most every `RECHECK_S`), not per request;
- a **run folder** (an instances.log, the harness's or SimulEval's) is served as an index of its instances and one
  decoding-timeline page per instance. The index shows the run's state — `running` (fewer instances than the run
  expects and its log grew lately), `finished`, or `stopped` — and a small script polls `/status.json` and reloads
  the page when a new instance lands. Instance pages are rendered once per instance (a logged instance never
  changes) and kept.

It binds 127.0.0.1 unless `--host` says otherwise, answers GET only, and a path outside the folder is a 404.
"""

from __future__ import annotations

import html
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import tornado.web

from harness import layout
from harness.errors import HarnessError

__all__ = ["make_app", "serve_view", "RECHECK_S", "RUNNING_WINDOW_S"]

RECHECK_S = 1.0
RUNNING_WINDOW_S = 120.0  # a log that grew within this is a run still going

_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="/static/style.css">
</head><body><main>{body}</main>{script}</body></html>"""

_POLL = """<script>
(function () {{
  var seen = {count};
  function poll() {{
    fetch("/status.json", {{cache: "no-store"}}).then(function (r) {{ return r.json(); }}).then(function (s) {{
      if (s.instances !== seen) {{ location.reload(); return; }}
      if (s.state === "running") {{ setTimeout(poll, 1000); }}
    }}).catch(function () {{ setTimeout(poll, 2000); }});
  }}
  setTimeout(poll, 1000);
}})();
</script>"""


class RunFolder:
    """One run folder as the viewer shows it: records read tolerantly, instance pages cached."""

    def __init__(self, path: Path) -> None:
        self.run = layout.RunDir(path)
        self.pages: dict[int, str] = {}
        self.lock = threading.Lock()

    def status(self) -> dict[str, Any]:
        from harness.runlog.live import scan
        from harness.runmeta import read_run_meta

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
        from harness.runlog.live import scan

        return scan(self.run.instances_log, keep_records=True).records

    def index_html(self) -> str:
        st = self.status()
        recs = self.records()
        rows = "".join(
            f'<tr class="instance"><td class="num"><a href="/instances/{i}.html">{i}</a></td>'
            f"<td>{html.escape(str(r.get('status', 'ok')))}</td>"
            f"<td>{html.escape(str(r.get('prediction', ''))[:200])}</td></tr>"
            for i, r in sorted(recs.items()))
        of = f" of {st['expected']}" if st["expected"] is not None else ""
        body = (f'<h1>Run {html.escape(self.run.path.name)}</h1>'
                f'<p class="run-state state-{st["state"]}" id="run-state"><strong>{st["state"]}</strong>: '
                f'{st["instances"]}{of} instances logged</p>'
                f'<table class="instances"><thead><tr><th>#</th><th>status</th><th>hypothesis</th></tr></thead>'
                f"<tbody>{rows}</tbody></table>")
        script = _POLL.format(count=st["instances"]) if st["state"] == "running" else ""
        return _PAGE.format(title=f"Run {html.escape(self.run.path.name)}", body=body, script=script)

    def instance_html(self, index: int) -> str | None:
        with self.lock:
            if index in self.pages:
                return self.pages[index]
        rec = self.records().get(index)
        if rec is None:
            return None
        from markupsafe import Markup

        from leaderboard import views
        from leaderboard.plots import timeline_svg

        unit = str(rec.get("latency_unit") or "word")
        view = views.timeline(rec, unit, isinstance(rec.get("source"), list) or unit == "ms")
        svg = Markup(timeline_svg(view))
        words = " ".join(f"{html.escape(w)}" for w in view["target_words"])
        body = (f'<p><a href="/">← run</a></p><h1>Instance {index}</h1>'
                f"<p>Status: {html.escape(str(rec.get('status', 'ok')))}</p>"
                f'<h2>Hypothesis</h2><p class="hypothesis" id="final-hypothesis">{words}</p>'
                f"<h2>Decoding timeline</h2>{svg}")
        page = _PAGE.format(title=f"Instance {index}", body=body, script="")
        with self.lock:
            self.pages[index] = page
        return page


class ResultsSite:
    """A results folder rendered into a private site folder, rendered again when its files changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.site = Path(tempfile.mkdtemp(prefix="harness-view-"))
        self.stamp: tuple[float, ...] | None = None
        self.checked = 0.0
        self.lock = threading.Lock()
        self.renders = 0

    def _stamp(self) -> tuple[float, ...]:
        files = [layout.ResultsDir(self.path).summary, *sorted(self.path.glob("*/*/instances.log"))]
        return tuple(f.stat().st_mtime_ns for f in files if f.exists())

    def current(self) -> Path:
        with self.lock:
            now = time.monotonic()
            if self.stamp is None or now - self.checked >= RECHECK_S:
                self.checked = now
                stamp = self._stamp()
                if stamp != self.stamp:
                    from leaderboard.render import render_site

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
        elif rel.startswith("static/"):
            from leaderboard.render import STATIC

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
