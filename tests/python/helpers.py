"""Meshes shared by the Python tests (the package's own shapes)."""
from tsubu.shapes import box, mesh_volume, open_box_walls  # noqa: F401
