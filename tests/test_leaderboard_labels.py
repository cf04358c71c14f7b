"""Point labels of the leaderboard plot (`leaderboard.labels`): placed inside the frame, over no point and no other
label, near their point first; a crowded plot still names its points."""

from __future__ import annotations

import random

from leaderboard.labels import Box, place_labels


def test_crowded_points_get_labels_that_overlap_nothing() -> None:
    rng = random.Random(7)
    frame = Box(64.0, 28.0, 570.0, 388.0)
    points = [(rng.uniform(90, 250), rng.uniform(120, 260)) for _ in range(20)]  # a dense cluster
    points += [(rng.uniform(70, 560), rng.uniform(40, 380)) for _ in range(10)]  # and some spread out
    texts = [f"system-{i}" + "x" * (i % 7) for i in range(len(points))]
    obstacle = Box(68.0, 30.0, 140.0, 46.0)  # a regime label
    placed = place_labels(points, texts, frame, 7.0, [obstacle])
    boxes = [p.box for p in placed if p is not None]
    assert len(boxes) >= 27  # nearly every point named, even in the cluster
    marks = [Box(x - 8, y - 8, x + 8, y + 8) for x, y in points]
    for i, box in enumerate(boxes):
        assert box.inside(frame)
        assert not box.overlaps(obstacle)
        assert not any(box.overlaps(m) for m in marks)
        assert not any(box.overlaps(other) for other in boxes[i + 1:])


def test_a_lone_point_is_named_right_beside_it() -> None:
    frame = Box(0.0, 0.0, 600.0, 400.0)
    [place] = place_labels([(300.0, 200.0)], ["offline"], frame)
    assert place is not None and not place.leader and place.anchor == "start" and place.x > 300.0
    [edge] = place_labels([(595.0, 200.0)], ["offline"], frame)  # at the right edge: to its left instead
    assert edge is not None and edge.anchor == "end" and edge.box.inside(frame)
