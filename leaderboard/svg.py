"""A very small SVG writer: escaped elements, linear scales and "nice" tick values. No dependency."""

from __future__ import annotations

import math
from html import escape

PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#7f3c8d", "#3969ac", "#a5aa99",
           "#f0e442")


def fmt(value: float) -> str:
    """A coordinate: short, deterministic."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def el(tag: str, body: str = "", **attrs: object) -> str:
    """One element; attribute names use `_` for `-`, values are escaped, `body` is already SVG."""
    parts = []
    for k, v in attrs.items():
        if v is None:
            continue
        name = k.rstrip("_").replace("_", "-")
        parts.append(f' {name}="{escape(fmt(v) if isinstance(v, float) else str(v), quote=True)}"')
    a = "".join(parts)
    return f"<{tag}{a}>{body}</{tag}>" if body else f"<{tag}{a}/>"


def text(x: float, y: float, content: str, **attrs: object) -> str:
    """A text element whose content is escaped."""
    return el("text", escape(content), x=x, y=y, **attrs)


def nice_ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(count - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks: list[float] = []
    v = start
    while not ticks or ticks[-1] < hi - step * 1e-9:
        ticks.append(round(v, 10))
        v += step
    return ticks


class Scale:
    """Linear map from data [d0, d1] to pixels [p0, p1]."""

    def __init__(self, d0: float, d1: float, p0: float, p1: float) -> None:
        if d1 == d0:
            d1 = d0 + 1.0
        self.d0, self.d1, self.p0, self.p1 = d0, d1, p0, p1

    def __call__(self, v: float) -> float:
        return self.p0 + (v - self.d0) * (self.p1 - self.p0) / (self.d1 - self.d0)


def document(width: int, height: int, title: str, desc: str, body: str, uid: str, css_class: str,
             **attrs: object) -> str:
    """An inline `<svg>` (no namespace URL: it lives in HTML) with role=img and a title/description that screen
    readers use as its alt text."""
    return el(
        "svg",
        el("title", escape(title), id=f"{uid}-title") + el("desc", escape(desc), id=f"{uid}-desc") + body,
        id=uid,
        viewBox=f"0 0 {width} {height}",
        role="img",
        aria_labelledby=f"{uid}-title {uid}-desc",
        class_=css_class,
        **attrs,
    )
