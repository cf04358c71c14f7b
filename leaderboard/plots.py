"""Build-time SVG plots: quality against latency per board, and the decoding timeline of one instance."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape as _esc
from typing import Any

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


def quality_latency_svg(board: Board, href_prefix: str = "") -> str | None:
    """Scatter of primary quality against primary latency with Pareto front, regimes and system curves."""
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
    sx = Scale(xt[0], xt[-1], ML, W - MR)
    sy = Scale(yt[0], yt[-1], H - MB, MT)
    parts: list[str] = []
    lo = xt[0]
    for i, (g, m) in enumerate(regimes):
        lo = max(lo, min(g.min_latency, xt[-1])) if g.min_latency is not None else lo
        hi = min(m, xt[-1])
        parts.append(el("rect", x=sx(lo), y=float(MT), width=max(sx(hi) - sx(lo), 0.0), height=float(H - MB - MT),
                        fill=REGIME_FILLS[i % len(REGIME_FILLS)], class_="regime"))
        label = f"{g.name} {g.min_latency:g}–{m:g}" if g.min_latency is not None else f"{g.name} ≤ {m:g}"
        narrow = sx(hi) - sx(lo) < len(label) * 7 + 8
        parts.append(text(sx(lo) + 4, MT + 14 + (14 * i if narrow else 0), label, class_="regime-label"))
        parts.append(el("line", x1=sx(hi), y1=float(MT), x2=sx(hi), y2=float(H - MB), stroke="#9aa5b1",
                        stroke_dasharray="4 3"))
        lo = hi
    for v in xt:
        parts.append(el("line", x1=sx(v), y1=float(MT), x2=sx(v), y2=float(H - MB), class_="grid"))
        parts.append(text(sx(v), H - MB + 18, f"{v:g}", text_anchor="middle", class_="tick"))
    for v in yt:
        parts.append(el("line", x1=float(ML), y1=sy(v), x2=float(W - MR), y2=sy(v), class_="grid"))
        parts.append(text(ML - 8, sy(v) + 4, f"{v:g}", text_anchor="end", class_="tick"))
    parts.append(el("rect", x=float(ML), y=float(MT), width=float(W - ML - MR), height=float(H - MT - MB),
                    fill="none", stroke="#52606d"))
    xlabel = f"{pl} ({_unit(board)}) — lower is better" if board.latency_unit else f"{pl} — lower is better"
    parts.append(text((ML + W - MR) / 2, H - 12, xlabel, text_anchor="middle", class_="axis-label"))
    parts.append(text(16, (MT + H - MB) / 2, f"{pq} — {'higher' if up else 'lower'} is better",
                      text_anchor="middle", transform=f"rotate(-90 16 {fmt((MT + H - MB) / 2)})",
                      class_="axis-label"))
    teams = sorted({p.run.team for p in points})
    color = {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(teams)}
    front = pareto_front(points, up)
    if len(front) > 1:
        d = [f"M{fmt(sx(front[0].x))},{fmt(sy(front[0].y))}"]
        for b in front[1:]:
            d.append(f"H{fmt(sx(b.x))}V{fmt(sy(b.y))}")
        parts.append(el("path", d="".join(d), fill="none", stroke="#1f2933", stroke_width=1.5,
                        stroke_dasharray="6 4", class_="pareto"))
    for p in front:  # a ring marks every point of the front (also when the front is a single point)
        parts.append(el("circle", cx=sx(p.x), cy=sy(p.y), r=10.0, fill="none", stroke="#1f2933", stroke_width=1.2,
                        stroke_dasharray="3 2", class_="pareto-point"))
    curves = system_curves(points)
    for (team, system), curve in curves.items():
        pts = " ".join(f"{fmt(sx(p.x))},{fmt(sy(p.y))}" for p in curve)
        parts.append(el("polyline", el("title", _esc(f"{team} / {system}: latency settings")), points=pts,
                        fill="none", stroke=color[team], stroke_width=2, class_="system-curve"))
    on_front = {id(p) for p in front}
    for p in points:
        ci = p.run.ci(pq)
        if ci:
            parts.append(el("line", x1=sx(p.x), y1=sy(ci[0]), x2=sx(p.x), y2=sy(ci[1]), stroke=color[p.run.team],
                            stroke_width=1, opacity=0.6))
        tip = (f"{p.run.team} / {p.run.system or p.run.submission} ({p.run.kind}"
               f"{', baseline' if p.run.baseline else ''}): {pq} {p.y:.2f}, {pl} {p.x:.2f}"
               f"{' — on the Pareto front' if id(p) in on_front else ''}")
        cx, cy = sx(p.x), sy(p.y)
        if p.run.baseline:
            shape = el("rect", x=cx - 5, y=cy - 5, width=10.0, height=10.0, fill="#ffffff", stroke=color[p.run.team],
                       stroke_width=2.5)
        else:
            fill = color[p.run.team] if p.run.kind == "primary" else "#ffffff"
            shape = el("circle", cx=cx, cy=cy, r=6.0 if id(p) in on_front else 5.0, fill=fill,
                       stroke=color[p.run.team], stroke_width=2)
        parts.append(el("a", el("title", _esc(tip)) + shape, href=href_prefix + p.run.page, class_="point"))
    ly = MT + 6
    lx = W - MR + 16
    parts.append(text(lx, ly + 4, "Teams", class_="legend-title"))
    for t in teams:
        ly += 18
        parts.append(el("circle", cx=float(lx + 5), cy=float(ly), r=5.0, fill=color[t]))
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
    title = f"{pq} against {pl} on {board.track} ({board.dataset})"
    desc = (f"Scatter plot of {len(points)} submissions: {pq} ({'higher' if up else 'lower'} is better) on the "
            f"vertical axis against {pl} in {_unit(board) or 'source units'} (lower is better) on the horizontal "
            f"axis. Pareto front: " + ", ".join(f"{p.run.team} {p.run.system} ({p.y:.1f} at {p.x:.2f})"
                                                 for p in front) + ". "
            + (("Shaded latency regimes: " + ", ".join(f"{g.name} up to {m:g}" for g, m in regimes) + ". ")
               if regimes else "")
            + (("Systems with several latency settings drawn as curves: "
                + ", ".join(f"{t} {s}" for t, s in curves) + ".") if curves else ""))
    return document(W, H, title, desc, "".join(parts), f"plot-{board.slug}", "plot")


def _px_unit(unit: str) -> tuple[float, str]:
    """Axis scale for source positions: seconds for audio (ms in the data), the unit itself otherwise."""
    return (1000.0, "s of audio") if unit == "ms" else (1.0, {"word": "words", "char": "characters"}.get(unit, unit))


def timeline_svg(view: dict[str, Any], uid: str = "timeline") -> str:
    """Source read (x; audio time for speech) against target words written (y): the policy as a staircase,
    revisions of a re-translation system as marks, and a cursor line moved by the slider."""
    unit = view["unit"]
    div, unit_name = _px_unit(unit)
    src_len = max(float(view["source_length"]), 1.0)
    delays: list[float] = view["delays"]
    elapsed: list[float] = view.get("elapsed_plot") or []
    revisions: list[dict[str, Any]] = view.get("revisions") or []
    n_max = max([len(delays)] + [r["length"] for r in revisions] + [1])
    w, h, ml, mr, mt, mb = 760, 320, 56, 20, 16, 48
    xt = nice_ticks(0.0, src_len / div)
    yt = nice_ticks(0.0, float(n_max), 6)
    yt = [v for v in yt if float(v).is_integer()] or [0.0, float(n_max)]
    sx = Scale(0.0, xt[-1], ml, w - mr)
    sy = Scale(0.0, max(yt[-1], 1.0), h - mb, mt)
    parts: list[str] = []
    for v in xt:
        parts.append(el("line", x1=sx(v), y1=float(mt), x2=sx(v), y2=float(h - mb), class_="grid"))
        parts.append(text(sx(v), h - mb + 16, f"{v:g}", text_anchor="middle", class_="tick"))
    for v in yt:
        parts.append(el("line", x1=float(ml), y1=sy(v), x2=float(w - mr), y2=sy(v), class_="grid"))
        parts.append(text(ml - 6, sy(v) + 4, f"{v:g}", text_anchor="end", class_="tick"))
    parts.append(el("rect", x=sx(0.0), y=float(mt), width=sx(src_len / div) - sx(0.0), height=float(h - mt - mb),
                    fill="#f5f7fa", class_="source-span"))
    parts.append(el("line", x1=sx(src_len / div), y1=float(mt), x2=sx(src_len / div), y2=float(h - mb),
                    stroke="#9aa5b1", stroke_dasharray="4 3"))
    parts.append(text(sx(src_len / div) - 4, mt + 12, "end of source", text_anchor="end", class_="tick"))
    parts.append(el("line", x1=sx(0.0), y1=sy(0.0), x2=sx(src_len / div), y2=sy(float(len(delays))),
                    stroke="#9aa5b1", stroke_width=1, class_="ideal"))

    def stair(values: list[float], css: str, color: str, dash: str | None = None) -> None:
        if not values:
            return
        d = [f"M{fmt(sx(0.0))},{fmt(sy(0.0))}"]
        for i, v in enumerate(values):
            d.append(f"H{fmt(sx(min(v, src_len) / div))}V{fmt(sy(float(i + 1)))}")
        parts.append(el("path", d="".join(d), fill="none", stroke=color, stroke_width=2, stroke_dasharray=dash,
                        class_=css))

    stair(elapsed, "elapsed", "#e69f00", "5 3")
    stair(delays, "delays", "#0072b2")
    for i, v in enumerate(delays):
        word = view["target_words"][i] if i < len(view["target_words"]) else ""
        parts.append(el("circle", el("title", _esc(f"“{word}” written after {v / div:g} {unit_name}")),
                        cx=sx(min(v, src_len) / div), cy=sy(float(i + 1)), r=3.5, fill="#0072b2"))
    for r in revisions:
        if r["erased"]:
            parts.append(el("path", el("title", _esc(f"revision at {r['delay'] / div:g} {unit_name}: "
                                                     f"{r['erased']} word(s) erased")),
                            d=_cross(sx(min(r["delay"], src_len) / div), sy(float(r["length"]))),
                            stroke="#d55e00", stroke_width=2.5, class_="revision"))
        else:
            parts.append(el("circle", el("title", _esc(f"revision at {r['delay'] / div:g} {unit_name}")),
                            cx=sx(min(r["delay"], src_len) / div), cy=sy(float(r["length"])), r=2.5,
                            fill="#d55e00", opacity=0.7))
    parts.append(el("line", x1=sx(0.0), y1=float(mt - 4), x2=sx(0.0), y2=float(h - mb), stroke="#c81e1e",
                    stroke_width=2, id=f"{uid}-cursor", class_="cursor"))
    parts.append(text((ml + w - mr) / 2, h - 10, f"source read ({unit_name})", text_anchor="middle",
                      class_="axis-label"))
    parts.append(text(14, (mt + h - mb) / 2, "target words written", text_anchor="middle",
                      transform=f"rotate(-90 14 {fmt((mt + h - mb) / 2)})", class_="axis-label"))
    title = "Decoding timeline: source read against target written"
    desc = (f"Staircase of {len(delays)} target words against {src_len / div:g} {unit_name} of source"
            + (f"; {sum(1 for r in revisions if r['erased'])} revisions erase words" if revisions else "")
            + (". Dashed orange: computation-aware (wall-clock) times." if elapsed else ".")
            + " The red line marks the moment chosen with the slider.")
    return document(w, h, title, desc, "".join(parts), uid, "timeline",
                    data_x0=fmt(sx(0.0)), data_x1=fmt(sx(xt[-1])), data_max=fmt(xt[-1] * div))


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
                        cx=sx(min(max(t / 1000.0, t0), t1)), cy=sy(float(i) + 0.5), r=3, fill="#0072b2"))
    parts.append(text((ml + w - mr) / 2, h - 8, "audio time (s)", text_anchor="middle", class_="axis-label"))
    parts.append(text(14, (mt + h - mb) / 2, "words", text_anchor="middle",
                      transform=f"rotate(-90 14 {fmt((mt + h - mb) / 2)})", class_="axis-label"))
    title = f"Words written between {t0:g} s and {t1:g} s"
    desc = (f"{len(points)} words written in this window; shaded bands: the reference sentences spoken in it "
            f"({', '.join('s' + str(s['n']) for s in window['sentences']) or 'none'}).")
    return document(w, h, title, desc, "".join(parts), uid, "timeline window")
