"""The overlay an installer looks at (doctor's snapshot, the report's frames): every label inside the
picture and clear of the others (issue 18: seats 1 and 6 fell off a 640x360 frame, BUTTON covered a
seat label)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from vision.layout import default_layout
from vision.overlay import Labels, draw_layout


def _inside(box, w, h):
    return box[0] >= 0 and box[1] >= 0 and box[2] <= w and box[3] <= h


def _clear(boxes):
    return not any(
        a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
        for a, b in itertools.combinations(boxes, 2)
    )


@pytest.mark.parametrize(("seats", "size"), [(6, (640, 360)), (10, (640, 360)), (9, (1920, 1080))])
def test_every_seat_label_is_inside_the_frame_and_clear_of_the_others(seats, size):
    w, h = size
    out = np.zeros((h, w, 3), np.uint8)
    labels = Labels(out, max(1, round(w / 900)))
    draw_layout(out, default_layout(seats, w, h), labels.t, labels)
    assert len(labels.boxes) == seats + 2  # every seat, the board and the muck
    assert all(_inside(b, w, h) for b in labels.boxes)
    assert _clear(labels.boxes)


def test_labels_put_on_one_spot_or_past_the_edge_are_moved_until_readable():
    out = np.zeros((360, 640, 3), np.uint8)
    labels = Labels(out, 1)
    for text, org in [("BUTTON", (600, 5)), ("seat 4", (610, 2)), ("Ah", (-40, 400)), ("Kd", (-40, 400))]:
        labels.put(text, org, (255, 255, 255))
    assert all(_inside(b, 640, 360) for b in labels.boxes)
    assert _clear(labels.boxes)
    assert out.any()  # something was drawn
