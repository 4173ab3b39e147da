"""A pinhole camera looking down at the table plane z = 0 (units: one die edge).

Real geometry rather than 2-D pasting, so that perspective, foreshortened top faces and the
side faces a tilted camera sees are all consistent with the labelled polygons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Camera:
    width: int
    height: int
    focal_px: float
    rotation: np.ndarray  # 3x3, world -> camera (OpenCV axes: x right, y down, z forward)
    position: np.ndarray  # camera centre in world units
    tilt_deg: float
    roll_deg: float

    @property
    def intrinsics(self) -> np.ndarray:
        return np.array(
            [[self.focal_px, 0.0, self.width / 2.0], [0.0, self.focal_px, self.height / 2.0], [0.0, 0.0, 1.0]]
        )

    def project(self, points: np.ndarray) -> np.ndarray:
        """World points (N, 3) -> image pixels (N, 2)."""
        cam = (np.asarray(points, float) - self.position) @ self.rotation.T
        uvw = cam @ self.intrinsics.T
        return uvw[:, :2] / uvw[:, 2:3]

    def depth(self, points: np.ndarray) -> np.ndarray:
        return ((np.asarray(points, float) - self.position) @ self.rotation.T)[:, 2]

    def table_homography(self) -> np.ndarray:
        """3x3 map from table coordinates (x, y, 1) to image pixels."""
        k_r = self.intrinsics @ self.rotation
        t = -k_r @ self.position
        return np.column_stack([k_r[:, 0], k_r[:, 1], t])

    def backproject_to_table(self, pixels: np.ndarray) -> np.ndarray:
        """Image pixels (N, 2) -> table points (N, 2) where their rays meet z = 0."""
        inv = np.linalg.inv(self.table_homography())
        pts = np.column_stack([np.asarray(pixels, float), np.ones(len(pixels))]) @ inv.T
        return pts[:, :2] / pts[:, 2:3]

    def px_per_unit_at(self, table_xy: np.ndarray) -> np.ndarray:
        """Rough image size of one die edge lying at these table points."""
        pts = np.column_stack([table_xy, np.zeros(len(table_xy))])
        return self.focal_px / self.depth(pts)


def look_down_camera(
    width: int, height: int, hfov_deg: float, distance: float, tilt_deg: float, roll_deg: float
) -> Camera:
    """A camera `distance` units from the table origin, its axis tilted `tilt_deg` from vertical."""
    focal = (max(width, height) / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
    tilt = math.radians(tilt_deg)
    position = np.array([0.0, -distance * math.sin(tilt), distance * math.cos(tilt)])
    forward = -position / np.linalg.norm(position)
    far = np.array([0.0, 1.0, 0.0])  # image "up" looks away from the photographer
    down = -(far - far.dot(forward) * forward)
    down /= np.linalg.norm(down)
    right = np.cross(down, forward)
    base = np.stack([right, down, forward])
    c, s = math.cos(math.radians(roll_deg)), math.sin(math.radians(roll_deg))
    roll = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return Camera(width, height, focal, roll @ base, position, tilt_deg, roll_deg)
