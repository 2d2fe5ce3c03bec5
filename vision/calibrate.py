"""Camera calibration: four ArUco markers at known table points -> homography -> table layout."""

from __future__ import annotations

import cv2
import numpy as np

from vision.layout import SIM_TABLE_MM, Layout, build_layout, marker_points


class CalibrationError(ValueError):
    """The picture does not allow calibration (message says which markers were seen)."""


def find_markers(frame: np.ndarray) -> dict[int, np.ndarray]:
    """Marker id -> centre (px) of every DICT_4X4_50 marker in the frame."""
    gray = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), cv2.aruco.DetectorParameters()
    )
    corners, ids, _ = detector.detectMarkers(gray)
    out: dict[int, np.ndarray] = {}
    if ids is None:
        return out
    for c, i in zip(corners, ids.ravel(), strict=True):
        out[int(i)] = c.reshape(4, 2).mean(axis=0)
    return out


def calibrate(frame: np.ndarray, seats: int, table_size=SIM_TABLE_MM) -> Layout:
    """Layout for this camera from one picture of the table with its four markers."""
    known = marker_points(table_size)
    seen = find_markers(frame)
    usable = [i for i in known if i in seen]
    if len(usable) < 4:
        missing = [i for i in known if i not in seen]
        raise CalibrationError(
            f"need the 4 table markers (ArUco DICT_4X4_50 ids {sorted(known)}); "
            f"seen {sorted(seen) or 'none'}, missing {missing}"
        )
    src = np.array([seen[i] for i in usable], np.float64)
    dst = np.array([known[i] for i in usable], np.float64)
    h, _ = cv2.findHomography(src, dst)
    if h is None:
        raise CalibrationError("markers are in a degenerate arrangement; cannot compute the table plane")
    return build_layout(seats, frame.shape[1], frame.shape[0], h, table_size)
