"""The surface settings every particle effect with a surface shares (csrc/core/surface.h)."""

from ..schema import Param

SURFACE_METHODS = (
    ("anisotropic", "Anisotropic",
     "Kernels stretched along each particle's neighbourhood (Yu & Turk 2013): still water is flat, sheets stay thin"),
    ("spheres", "Spheres (preview)",
     "A smoothed union of spheres: faster at coarse voxels, grainy on still water"),
)


def surface_params(advanced):
    """The four surface settings, in the Output group (advanced: closed by default on the panel)."""
    return (
        Param("surface_method", "enum", "anisotropic", "How the surface is made from the particles",
              items=SURFACE_METHODS, group="Output", advanced=advanced, label="Surface"),
        Param("surface_voxel_ratio", "float", 0.5, "Surface voxel size as a fraction of the particle radius",
              min=0.1, max=4.0, group="Output", advanced=advanced, label="Voxel Ratio"),
        Param("surface_radius_scale", "float", 2.0, "Spheres: sphere radius per particle, x the particle radius",
              min=0.5, max=4.0, group="Output", advanced=True, label="Radius Scale"),
        Param("surface_smoothing", "int", 4, "Spheres: Gaussian smoothing passes (0: the raw union of spheres)",
              min=0, max=20, group="Output", advanced=True, label="Smoothing"),
    )
