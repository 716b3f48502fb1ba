"""The compiled core of the Tsubu add-on (module tsubu_core._core), shipped as a wheel per Python
version so that a Blender Extension can carry it. The add-on finds it through tsubu._native;
nothing here is meant to be imported directly."""
