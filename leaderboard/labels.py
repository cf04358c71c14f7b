"""Point labels placed without overlapping: each label goes to the first free place around its point (beside it,
then above or below, then further out with a leader line), never over another label, another point or the frame.

Text widths are estimated from the character count (`CHAR_W` plot units per character at `FONT` units): an upper
bound for the system fonts the site uses, so that boxes that do not overlap here do not overlap when drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Box", "Placement", "place_labels", "label_box", "FONT", "CHAR_W", "LABEL_MAX"]

FONT = 13.0  # plot units: >= 11 CSS px down to the plot's smallest width (660 of 760 units)
CHAR_W = 0.62 * FONT  # the widest average glyph of the system sans-serif fonts, with a margin
LABEL_MAX = 24  # characters of a label (a longer name is cut, with an ellipsis)
PAD = 2.0


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle in plot units."""

    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1

    def inside(self, frame: Box) -> bool:
        return self.x0 >= frame.x0 and self.y0 >= frame.y0 and self.x1 <= frame.x1 and self.y1 <= frame.y1


@dataclass(frozen=True)
class Placement:
    """Where a label's text goes (its anchor `x`, baseline `y` and text-anchor) and whether it needs a leader."""

    x: float
    y: float
    anchor: str  # start | middle | end
    box: Box
    leader: bool


def label_box(x: float, y: float, anchor: str, text: str) -> Box:
    """The box a label of `text` covers with its anchor at (x, baseline y)."""
    w = len(text) * CHAR_W
    x0 = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
    return Box(x0 - PAD, y - FONT * 0.8 - PAD, x0 + w + PAD, y + FONT * 0.25 + PAD)


def _candidates(px: float, py: float, r: float) -> list[tuple[float, float, str, bool]]:
    """Label anchors around a point of radius `r`: right, left, above, below, then the diagonals and the directions
    between, nearest first; further out (with a leader line) only where nothing near is free."""
    out: list[tuple[float, float, str, bool]] = []
    for step in (0.0, 12.0, 24.0, 38.0, 54.0, 72.0, 92.0, 116.0, 144.0):
        d = r + 4 + step
        for k in (0, 8, 4, 12, 2, 6, 10, 14, 1, 7, 9, 15, 3, 5, 11, 13):  # 16 directions, the plain ones first
            angle = math.pi * k / 8
            dx, dy = math.cos(angle), -math.sin(angle)
            anchor = "start" if dx > 0.3 else "end" if dx < -0.3 else "middle"
            # the baseline sits below the text: above a point, lift it; below, drop it by the text's height
            y = py + dy * d + (FONT * 0.35 if abs(dy) < 0.3 else FONT * 0.8 if dy > 0 else -2.0)
            out.append((px + dx * d, y, anchor, step > 0))
    return out


def place_labels(points: list[tuple[float, float]], texts: list[str], frame: Box, r: float = 6.0,
                 obstacles: list[Box] | None = None) -> list[Placement | None]:
    """A placement for each point's label (None: no free place; the point keeps its tooltip), in point order.

    Labels are placed from the most crowded point outwards, each in the first candidate place that stays inside
    `frame` and overlaps no point, no obstacle and no label placed before."""
    taken = [Box(x - r - 1, y - r - 1, x + r + 1, y + r + 1) for x, y in points] + list(obstacles or [])
    crowd = [sum(1 for qx, qy in points if abs(qx - px) < 80 and abs(qy - py) < 30) for px, py in points]
    order = sorted(range(len(points)), key=lambda i: (-crowd[i], points[i][0]))
    placed: list[Placement | None] = [None] * len(points)
    for i in order:
        px, py = points[i]
        for x, y, anchor, far in _candidates(px, py, r):
            box = label_box(x, y, anchor, texts[i])
            if box.inside(frame) and not any(box.overlaps(t) for t in taken):
                placed[i] = Placement(x, y, anchor, box, far)
                taken.append(box)
                break
    return placed
