"""Build-time SVG plots: quality against latency per board, and the decoding timeline of one instance."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape as _esc
from typing import Any

from leaderboard.labels import LABEL_MAX, Box, label_box, place_labels
from leaderboard.model import Board, Run
from leaderboard.svg import PALETTE, Scale, document, el, fmt, nice_ticks, text

W, H = 760, 440
ML, MR, MT, MB = 64, 190, 28, 52
REGIME_FILLS = ("#e8f1fb", "#f4f8ee", "#fbf3e6", "#f3ecf8", "#eef4f4")


@dataclass(frozen=True)
class Point:
    """One scored run on the quality–latency plane."""

    run: Run
    x: float
    y: float


def pareto_front(points: list[Point], higher_is_better: bool) -> list[Point]:
    """Points no other point beats on both axes (lower latency and better quality), by increasing latency."""
    front: list[Point] = []
    best: float | None = None
    for p in sorted(points, key=lambda p: (p.x, -p.y if higher_is_better else p.y)):
        if best is None or (p.y > best if higher_is_better else p.y < best):
            front.append(p)
            best = p.y
    return front


def system_curves(points: list[Point]) -> dict[tuple[str, str], list[Point]]:
    """Systems with several scored runs (its latency settings), each as a curve by increasing latency.

    A system is a team AND a system name: two different systems of one team are never joined. A run without a
    system name is a system of its own (its submission id), so it is joined to nothing.
    """
    by_system: dict[tuple[str, str], list[Point]] = {}
    for p in points:
        by_system.setdefault((p.run.team, p.run.system or f"\0{p.run.submission}"), []).append(p)
    return {k: sorted(ps, key=lambda p: p.x) for k, ps in by_system.items() if len(ps) > 1}


def _unit(board: Board) -> str:
    return {"word": "words", "char": "characters", "ms": "ms"}.get(board.latency_unit, board.latency_unit)


@dataclass
class _Plot:
    """One board's quality–latency plot while it is drawn: its points, scales and colours."""

    board: Board
    points: list[Point]
    up: bool  # higher quality is better
    regimes: list[tuple[Any, float]]  # (regime, its max_latency)
    sx: Scale
    sy: Scale
    xt: list[float]
    yt: list[float]
    color: dict[str, str]
    front: list[Point]


def _plot_frame(board: Board) -> _Plot | None:
    """The points of `board` with their scales (the x axis covers every regime bound, the y axis every interval)."""
    pq, pl = board.primary_quality, board.primary_latency
    points = [Point(r, x, y) for r in board.scored  # every scored run has its primary quality
              if (x := r.score(pl)) is not None and (y := r.score(pq)) is not None]
    if not points:
        return None
    up = board.catalog.describe(pq).higher_is_better is not False
    regimes = [(g, m) for g in board.regimes if (m := g.max_latency) is not None]
    xs = [p.x for p in points] + [m for _, m in regimes]
    ys = [p.y for p in points]
    for p in points:
        ci = p.run.ci(pq)
        if ci:
            ys += list(ci)
    xt = nice_ticks(min(0.0, min(xs)), max(xs) * 1.05)
    yt = nice_ticks(min(ys) - 0.5, max(ys) + 0.5)
    teams = sorted({p.run.team for p in points})
    return _Plot(board, points, up, regimes, Scale(xt[0], xt[-1], ML, W - MR), Scale(yt[0], yt[-1], H - MB, MT),
                 xt, yt, {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(teams)}, pareto_front(points, up))


def _regime_layout(q: _Plot) -> list[tuple[float, float, str, float, float]]:
    """Each regime's band (from, to: plot x) and its label with the label's place (narrow bands' labels stacked)."""
    out: list[tuple[float, float, str, float, float]] = []
    sx, xt = q.sx, q.xt
    lo = xt[0]
    for i, (g, m) in enumerate(q.regimes):
        lo = max(lo, min(g.min_latency, xt[-1])) if g.min_latency is not None else lo
        hi = min(m, xt[-1])
        label = f"{g.name} {g.min_latency:g}–{m:g}" if g.min_latency is not None else f"{g.name} ≤ {m:g}"
        narrow = sx(hi) - sx(lo) < len(label) * 7 + 8
        out.append((sx(lo), sx(hi), label, sx(lo) + 4, MT + 14 + (14 * i if narrow else 0)))
        lo = hi
    return out


def _regime_bands(q: _Plot) -> list[str]:
    """A shaded band per regime with its name and bounds, and a dashed line at its upper bound."""
    parts: list[str] = []
    labels: list[str] = []  # drawn over every band: a narrow band's label reaches into the next band
    for i, (x0, x1, label, lx, ly) in enumerate(_regime_layout(q)):
        parts.append(el("rect", x=x0, y=float(MT), width=max(x1 - x0, 0.0), height=float(H - MB - MT),
                        fill=REGIME_FILLS[i % len(REGIME_FILLS)], class_="regime"))
        labels.append(text(lx, ly, label, class_="regime-label"))
        parts.append(el("line", x1=x1, y1=float(MT), x2=x1, y2=float(H - MB), stroke="#9aa5b1",
                        stroke_dasharray="4 3"))
    return parts + labels


def _plot_axes(q: _Plot) -> list[str]:
    """Grid, ticks, frame and axis titles."""
    parts: list[str] = []
    for v in q.xt:
        parts.append(el("line", x1=q.sx(v), y1=float(MT), x2=q.sx(v), y2=float(H - MB), class_="grid"))
        parts.append(text(q.sx(v), H - MB + 18, f"{v:g}", text_anchor="middle", class_="tick"))
    for v in q.yt:
        parts.append(el("line", x1=float(ML), y1=q.sy(v), x2=float(W - MR), y2=q.sy(v), class_="grid"))
        parts.append(text(ML - 8, q.sy(v) + 4, f"{v:g}", text_anchor="end", class_="tick"))
    parts.append(el("rect", x=float(ML), y=float(MT), width=float(W - ML - MR), height=float(H - MT - MB),
                    fill="none", stroke="#52606d"))
    pq, pl = q.board.primary_quality, q.board.primary_latency
    xlabel = f"{pl} ({_unit(q.board)}) — lower is better" if q.board.latency_unit else f"{pl} — lower is better"
    parts.append(text((ML + W - MR) / 2, H - 12, xlabel, text_anchor="middle", class_="axis-label"))
    parts.append(text(16, (MT + H - MB) / 2, f"{pq} — {'higher' if q.up else 'lower'} is better",
                      text_anchor="middle", transform=f"rotate(-90 16 {fmt((MT + H - MB) / 2)})",
                      class_="axis-label"))
    return parts


def _front_and_curves(q: _Plot) -> list[str]:
    """The Pareto front (dashed steps, a ring per point) and a line through each system's latency settings."""
    parts: list[str] = []
    sx, sy, front = q.sx, q.sy, q.front
    if len(front) > 1:
        d = [f"M{fmt(sx(front[0].x))},{fmt(sy(front[0].y))}"]
        for b in front[1:]:
            d.append(f"H{fmt(sx(b.x))}V{fmt(sy(b.y))}")
        parts.append(el("path", d="".join(d), fill="none", stroke="#1f2933", stroke_width=1.5,
                        stroke_dasharray="6 4", class_="pareto"))
    for p in front:  # a ring marks every point of the front (also when the front is a single point)
        parts.append(el("circle", cx=sx(p.x), cy=sy(p.y), r=10.0, fill="none", stroke="#1f2933", stroke_width=1.2,
                        stroke_dasharray="3 2", class_="pareto-point"))
    for (team, system), curve in system_curves(q.points).items():
        pts = " ".join(f"{fmt(sx(p.x))},{fmt(sy(p.y))}" for p in curve)
        parts.append(el("polyline", el("title", _esc(f"{team} / {system}: latency settings")), points=pts,
                        fill="none", stroke=q.color[team], stroke_width=2, class_="system-curve"))
    return parts


def _point_marks(q: _Plot, href_prefix: str) -> list[str]:
    """Each run: its interval bar and its mark (filled: primary, hollow: contrastive, square: baseline), a link."""
    parts: list[str] = []
    pq, pl = q.board.primary_quality, q.board.primary_latency
    on_front = {id(p) for p in q.front}
    for p in q.points:
        color = q.color[p.run.team]
        ci = p.run.ci(pq)
        if ci:
            parts.append(el("line", x1=q.sx(p.x), y1=q.sy(ci[0]), x2=q.sx(p.x), y2=q.sy(ci[1]), stroke=color,
                            stroke_width=1, opacity=0.6))
        tip = (f"{p.run.team} / {p.run.system or p.run.submission} ({p.run.kind}"
               f"{', baseline' if p.run.baseline else ''}): {pq} {p.y:.2f}, {pl} {p.x:.2f}"
               f"{' — on the Pareto front' if id(p) in on_front else ''}")
        cx, cy = q.sx(p.x), q.sy(p.y)
        if p.run.baseline:
            shape = el("rect", x=cx - 5, y=cy - 5, width=10.0, height=10.0, fill="#ffffff", stroke=color,
                       stroke_width=2.5)
        else:
            fill = color if p.run.kind == "primary" else "#ffffff"
            shape = el("circle", cx=cx, cy=cy, r=6.0 if id(p) in on_front else 5.0, fill=fill, stroke=color,
                       stroke_width=2)
        parts.append(el("a", el("title", _esc(tip)) + shape, href=href_prefix + p.run.page, class_="point"))
    return parts


def point_names(points: list[Point]) -> list[str]:
    """What labels a point: its system's name, or its submission id where the name does not tell it apart (a
    system's latency settings, a name two teams use, a run without a system name); cut to `LABEL_MAX`."""
    names = [p.run.system or p.run.submission for p in points]
    out = [n if names.count(n) == 1 else p.run.submission for n, p in zip(names, points, strict=True)]
    return [n if len(n) <= LABEL_MAX else n[: LABEL_MAX - 1] + "…" for n in out]


def _point_labels(q: _Plot) -> list[str]:
    """The name of each point, placed where it overlaps no other label, point or regime label (a leader line
    joins a label placed further out to its point)."""
    xy = [(q.sx(p.x), q.sy(p.y)) for p in q.points]
    names = point_names(q.points)
    regime_labels = [label_box(lx, ly, "start", label) for _, _, label, lx, ly in _regime_layout(q)]
    frame = Box(float(ML) + 1, float(MT) + 1, float(W - MR) - 1, float(H - MB) - 1)
    parts: list[str] = []
    for (px, py), name, place in zip(xy, names, place_labels(xy, names, frame, 7.0, regime_labels), strict=True):
        if place is None:
            continue
        if place.leader:  # from the mark's edge to the nearest point of the label's box
            bx = min(max(px, place.box.x0), place.box.x1)
            by = min(max(py, place.box.y0), place.box.y1)
            dist = max(math.hypot(bx - px, by - py), 1.0)
            sx, sy = px + (bx - px) * 7.0 / dist, py + (by - py) * 7.0 / dist
            parts.append(el("line", x1=sx, y1=sy, x2=bx, y2=by, stroke="#9aa5b1", stroke_width=1,
                            class_="label-leader"))
        parts.append(text(place.x, place.y, name, text_anchor=place.anchor, class_="point-label"))
    return parts


def _legend(q: _Plot) -> list[str]:
    """Teams by colour, then what the marks and the dashed line mean."""
    parts: list[str] = []
    ly = MT + 6
    lx = W - MR + 16
    parts.append(text(lx, ly + 4, "Teams", class_="legend-title"))
    for t in q.color:
        ly += 18
        parts.append(el("circle", cx=float(lx + 5), cy=float(ly), r=5.0, fill=q.color[t]))
        parts.append(text(lx + 16, ly + 4, t[:22], class_="legend"))
    ly += 28
    parts.append(el("circle", cx=float(lx + 5), cy=float(ly), r=5.0, fill="#52606d"))
    parts.append(text(lx + 16, ly + 4, "primary", class_="legend"))
    ly += 18
    parts.append(el("circle", cx=float(lx + 5), cy=float(ly), r=5.0, fill="#ffffff", stroke="#52606d", stroke_width=2))
    parts.append(text(lx + 16, ly + 4, "contrastive", class_="legend"))
    ly += 18
    parts.append(el("rect", x=float(lx), y=float(ly - 5), width=10.0, height=10.0, fill="#ffffff", stroke="#52606d",
                    stroke_width=2))
    parts.append(text(lx + 16, ly + 4, "baseline", class_="legend"))
    ly += 18
    parts.append(el("line", x1=float(lx - 2), y1=float(ly), x2=float(lx + 12), y2=float(ly), stroke="#1f2933",
                    stroke_width=1.5, stroke_dasharray="6 4"))
    parts.append(text(lx + 16, ly + 4, "Pareto front", class_="legend"))
    return parts


def _plot_desc(q: _Plot) -> str:
    """The plot's text alternative."""
    pq, pl, board = q.board.primary_quality, q.board.primary_latency, q.board
    curves = system_curves(q.points)
    return (f"Scatter plot of {len(q.points)} submissions: {pq} ({'higher' if q.up else 'lower'} is better) on the "
            f"vertical axis against {pl} in {_unit(board) or 'source units'} (lower is better) on the horizontal "
            f"axis. Pareto front: " + ", ".join(f"{p.run.team} {p.run.system} ({p.y:.1f} at {p.x:.2f})"
                                                 for p in q.front) + ". "
            + (("Shaded latency regimes: " + ", ".join(f"{g.name} up to {m:g}" for g, m in q.regimes) + ". ")
               if q.regimes else "")
            + (("Systems with several latency settings drawn as curves: "
                + ", ".join(f"{t} {s}" for t, s in curves) + ".") if curves else ""))


def quality_latency_svg(board: Board, href_prefix: str = "", uid: str | None = None) -> str | None:
    """Scatter of primary quality against primary latency with Pareto front, regimes, system curves and a name
    beside each point (`uid`: the SVG's id, default `plot-BOARD`)."""
    q = _plot_frame(board)
    if q is None:
        return None
    parts = (_regime_bands(q) + _plot_axes(q) + _front_and_curves(q) + _point_marks(q, href_prefix)
             + _point_labels(q) + _legend(q))
    title = f"{board.primary_quality} against {board.primary_latency} on {board.track} ({board.dataset})"
    return document(W, H, title, _plot_desc(q), "".join(parts), uid or f"plot-{board.slug}", "plot")


def _px_unit(unit: str) -> tuple[float, str]:
    """Axis scale for source positions: seconds for audio (ms in the data), the unit itself otherwise."""
    return (1000.0, "s of audio") if unit == "ms" else (1.0, {"word": "words", "char": "characters"}.get(unit, unit))


@dataclass(frozen=True)
class _Frame:
    """A timeline's plotting frame: its scales and the unit of its source axis."""

    sx: Scale
    sy: Scale
    div: float  # source units per axis unit (1000: ms of audio drawn in seconds)
    unit_name: str
    left: float
    right: float
    top: float
    bottom: float


TL_W, TL_H, TL_ML, TL_MR, TL_MT, TL_MB = 760, 320, 56, 20, 16, 48


def count_ticks(n: float, count: int = 6) -> list[float]:
    """Whole-number ticks from 0 covering `n` (a count of words: no half words, and the last tick >= n)."""
    nice = nice_ticks(0.0, max(float(n), 1.0), count)
    step = max(1, math.ceil(nice[1] - nice[0]))
    top = max(1, math.ceil(n / step)) * step
    return [float(v) for v in range(0, top + 1, step)]


def timeline_extent(view: dict[str, Any]) -> float:
    """The largest source position a timeline draws: the source's end, every write, every computation-aware time
    and every revision (a computation-aware time lies beyond the audio's end when the agent computes after it)."""
    revisions: list[dict[str, Any]] = view.get("revisions") or []
    return max([float(view["source_length"]), 1.0] + list(view["delays"]) + list(view.get("elapsed_plot") or [])
               + [float(r["delay"]) for r in revisions])


def _timeline_frame(view: dict[str, Any]) -> tuple[_Frame, list[float], list[float]]:
    """Scales covering everything drawn: the x axis to `timeline_extent`, the y axis to the longest output."""
    div, unit_name = _px_unit(view["unit"])
    revisions: list[dict[str, Any]] = view.get("revisions") or []
    n_max = max([len(view["delays"])] + [r["length"] for r in revisions] + [1])
    xt = nice_ticks(0.0, timeline_extent(view) / div)
    yt = count_ticks(float(n_max))
    sx = Scale(0.0, xt[-1], TL_ML, TL_W - TL_MR)
    sy = Scale(0.0, yt[-1], TL_H - TL_MB, TL_MT)
    return _Frame(sx, sy, div, unit_name, TL_ML, TL_W - TL_MR, TL_MT, TL_H - TL_MB), xt, yt


def _timeline_grid(f: _Frame, xt: list[float], yt: list[float], src_len: float, words: int) -> list[str]:
    """Grid, ticks, the source's span with its end marked, and the ideal diagonal."""
    parts: list[str] = []
    for v in xt:
        parts.append(el("line", x1=f.sx(v), y1=f.top, x2=f.sx(v), y2=f.bottom, class_="grid"))
        parts.append(text(f.sx(v), f.bottom + 16, f"{v:g}", text_anchor="middle", class_="tick"))
    for v in yt:
        parts.append(el("line", x1=f.left, y1=f.sy(v), x2=f.right, y2=f.sy(v), class_="grid"))
        parts.append(text(f.left - 6, f.sy(v) + 4, f"{v:g}", text_anchor="end", class_="tick"))
    end = f.sx(src_len / f.div)
    parts.append(el("rect", x=f.left, y=f.top, width=end - f.left, height=f.bottom - f.top, fill="#f5f7fa",
                    class_="source-span"))
    parts.append(el("line", x1=end, y1=f.top, x2=end, y2=f.bottom, stroke="#9aa5b1", stroke_dasharray="4 3"))
    parts.append(text(end - 4, f.top + 12, "end of source", text_anchor="end", class_="tick"))
    parts.append(el("line", x1=f.left, y1=f.sy(0.0), x2=end, y2=f.sy(float(words)), stroke="#9aa5b1",
                    stroke_width=1, class_="ideal"))
    parts.append(el("rect", x=f.left, y=f.top, width=f.right - f.left, height=f.bottom - f.top, fill="none",
                    stroke="#bcccdc", class_="frame"))
    return parts


def _stair(f: _Frame, values: list[float], css: str, color: str, dash: str | None = None) -> str:
    """The policy as a staircase: word i+1 is written at source position values[i] (drawn where it is)."""
    if not values:
        return ""
    d = [f"M{fmt(f.sx(0.0))},{fmt(f.sy(0.0))}"]
    for i, v in enumerate(values):
        d.append(f"H{fmt(f.sx(v / f.div))}V{fmt(f.sy(float(i + 1)))}")
    return el("path", d="".join(d), fill="none", stroke=color, stroke_width=2, stroke_dasharray=dash, class_=css)


def _timeline_marks(f: _Frame, view: dict[str, Any]) -> list[str]:
    """A dot per target word at its moment, a mark per revision (a cross where it erased words)."""
    parts: list[str] = []
    for i, v in enumerate(view["delays"]):
        word = view["target_words"][i] if i < len(view["target_words"]) else ""
        parts.append(el("circle", el("title", _esc(f"“{word}” written after {v / f.div:g} {f.unit_name}")),
                        cx=f.sx(v / f.div), cy=f.sy(float(i + 1)), r=3.5, fill="#0072b2", class_="write",
                        data_t=repr(float(v)) if view["unit"] == "ms" else None))  # the replay's jump target
    for r in view.get("revisions") or []:
        x, y = f.sx(r["delay"] / f.div), f.sy(float(r["length"]))
        if r["erased"]:
            parts.append(el("path", el("title", _esc(f"revision at {r['delay'] / f.div:g} {f.unit_name}: "
                                                     f"{r['erased']} word(s) erased")),
                            d=_cross(x, y), stroke="#d55e00", stroke_width=2.5, class_="revision"))
        else:
            parts.append(el("circle", el("title", _esc(f"revision at {r['delay'] / f.div:g} {f.unit_name}")),
                            cx=x, cy=y, r=2.5, fill="#d55e00", opacity=0.7, class_="revision"))
    return parts


def timeline_svg(view: dict[str, Any], uid: str = "timeline") -> str:
    """Source read (x; audio time for speech) against target words written (y): the policy as a staircase,
    computation-aware times as a dashed staircase where they are, revisions of a re-translation system as marks,
    and a cursor line moved by the slider. Both axes cover everything drawn."""
    delays: list[float] = view["delays"]
    elapsed: list[float] = view.get("elapsed_plot") or []
    revisions: list[dict[str, Any]] = view.get("revisions") or []
    src_len = max(float(view["source_length"]), 1.0)
    f, xt, yt = _timeline_frame(view)
    parts = _timeline_grid(f, xt, yt, src_len, len(delays))
    parts += [_stair(f, elapsed, "elapsed", "#e69f00", "5 3"), _stair(f, delays, "delays", "#0072b2")]
    parts += _timeline_marks(f, view)
    parts.append(el("line", x1=f.left, y1=f.top - 4, x2=f.left, y2=f.bottom, stroke="#c81e1e",
                    stroke_width=2, id=f"{uid}-cursor", class_="cursor"))
    parts.append(text((f.left + f.right) / 2, TL_H - 10, f"source read ({f.unit_name})", text_anchor="middle",
                      class_="axis-label"))
    mid = (f.top + f.bottom) / 2
    parts.append(text(14, mid, "target words written", text_anchor="middle", transform=f"rotate(-90 14 {fmt(mid)})",
                      class_="axis-label"))
    title = "Decoding timeline: source read against target written"
    desc = (f"Staircase of {len(delays)} target words against {src_len / f.div:g} {f.unit_name} of source"
            + (f"; {sum(1 for r in revisions if r['erased'])} revisions erase words" if revisions else "")
            + (f". Dashed orange: computation-aware (wall-clock) times, the last at {max(elapsed) / f.div:g} "
               f"{f.unit_name}." if elapsed else ".")
            + " The red line marks the moment chosen with the slider.")
    return document(TL_W, TL_H, title, desc, "".join(parts), uid, "timeline",
                    data_x0=fmt(f.sx(0.0)), data_x1=fmt(f.sx(xt[-1])), data_max=fmt(xt[-1] * f.div))


def _cross(x: float, y: float, s: float = 5.0) -> str:
    return f"M{fmt(x - s)},{fmt(y - s)}L{fmt(x + s)},{fmt(y + s)}M{fmt(x - s)},{fmt(y + s)}L{fmt(x + s)},{fmt(y - s)}"


def window_svg(window: dict[str, Any], uid: str) -> str:
    """One window of a long recording's timeline: audio time (x, seconds) against the words written in that window
    (y, their index in the output stream), with the reference sentences of the window as labelled bands."""
    t0, t1 = window["start_ms"] / 1000.0, window["end_ms"] / 1000.0
    points: list[tuple[float, int, str]] = window["points"]
    lo = min((i for _, i, _ in points), default=0)
    hi = max((i for _, i, _ in points), default=lo) + 1
    w, h, ml, mr, mt, mb = 760, 220, 56, 20, 26, 40
    xt = nice_ticks(t0, t1, 7)
    xt = [v for v in xt if t0 <= v <= t1] or [t0, t1]
    sx = Scale(t0, t1, ml, w - mr)
    sy = Scale(float(lo), float(max(hi, lo + 1)), h - mb, mt)
    parts: list[str] = []
    for k, s in enumerate(window["sentences"]):
        a, b = max(s["start_ms"] / 1000.0, t0), min(s["end_ms"] / 1000.0, t1)
        if b <= a:
            continue
        parts.append(el("rect", el("title", _esc(f"sentence {s['n']}: {s['start_ms'] / 1000:.1f}–"
                                                 f"{s['end_ms'] / 1000:.1f} s")),
                        x=sx(a), y=float(mt), width=sx(b) - sx(a), height=float(h - mt - mb),
                        fill="#eef3f8" if k % 2 == 0 else "#f7f9fb", class_="sentence-band"))
        parts.append(text(sx(a) + 3, mt - 6, f"s{s['n']}", class_="tick"))
    for v in xt:
        parts.append(el("line", x1=sx(v), y1=float(mt), x2=sx(v), y2=float(h - mb), class_="grid"))
        parts.append(text(sx(v), h - mb + 16, f"{v:g}", text_anchor="middle", class_="tick"))
    for t, i, word in points:
        parts.append(el("circle", el("title", _esc(f"“{word}” written at {t / 1000:.2f} s")),
                        cx=sx(min(max(t / 1000.0, t0), t1)), cy=sy(float(i) + 0.5), r=3, fill="#0072b2",
                        data_t=repr(float(t))))
    parts.append(text((ml + w - mr) / 2, h - 8, "audio time (s)", text_anchor="middle", class_="axis-label"))
    parts.append(text(14, (mt + h - mb) / 2, "words", text_anchor="middle",
                      transform=f"rotate(-90 14 {fmt((mt + h - mb) / 2)})", class_="axis-label"))
    title = f"Words written between {t0:g} s and {t1:g} s"
    desc = (f"{len(points)} words written in this window; shaded bands: the reference sentences spoken in it "
            f"({', '.join('s' + str(s['n']) for s in window['sentences']) or 'none'}).")
    return document(w, h, title, desc, "".join(parts), uid, "timeline window", data_t0=fmt(t0 * 1000),
                    data_t1=fmt(t1 * 1000), data_x0=fmt(sx(t0)), data_x1=fmt(sx(t1)), data_y0=mt, data_y1=h - mb)
