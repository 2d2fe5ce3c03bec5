"""The service's warm-up probe must exercise the whole path a flashed card takes (detection, face,
reading), or the first real card would again pay the one-time set-up; and it must teach the real
detector nothing (card size, tracked cards) about a table it has not seen."""

from __future__ import annotations

from vision.detect import Detector
from vision.warmup import probe_frame, warm_up


def test_the_probe_has_a_face_up_card_that_gets_read_and_a_face_down_card():
    result = Detector().detect(probe_frame())
    faces = sorted(c.face for c in result.cards)
    assert faces == ["down", "up"]
    up = next(c for c in result.cards if c.face == "up")
    assert up.code is not None  # the reader ran to the end on it


def test_warm_up_leaves_the_real_detector_untouched():
    detector = Detector(track=True)
    warm_up(detector)
    assert detector.card_width_hint is None
    assert detector._memo == [] and detector._blob_memo == []
