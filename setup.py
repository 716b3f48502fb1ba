"""Build the extension tsubu._core for the Python that runs this file.

    .venv/build-3.11/bin/python setup.py build_ext --inplace     (what `make build` does, and with
    .venv/build-3.13/bin/python for Python 3.13; both venvs hold NumPy 2.2, whose headers give a module
    that loads in NumPy 1.21 and newer; scripts/build_wheels.py packs these same modules as wheels)

C11 core and binding, one C++ file for OpenVDB, NumPy C API; linked against
OpenVDB, TBB, zlib and Qhull. The built module lands in addon/tsubu/, so the
add-on folder is importable as is (PYTHONPATH=addon) and installable in Blender.
"""
import glob
import os
import re
from concurrent.futures import ThreadPoolExecutor

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# -ffp-contract=off: no fused multiply-adds, so that the SPH loops' AVX2 and portable forms round alike
# on every compiler and CPU (GCC's ISO C mode already does this; clang's default does not)
C_FLAGS = ["-std=c11", "-D_GNU_SOURCE", "-O3", "-fno-math-errno", "-ffp-contract=off", "-fopenmp", "-Wall", "-Wextra"]
CXX_FLAGS = ["-std=c++17", "-O3", "-Wall", "-Wextra"]


class BuildExt(build_ext):
    """Give C and C++ sources their own flags (distutils passes one set to both), and compile them on every
    core (distutils compiles one source at a time)."""

    def build_extensions(self):
        compiler = self.compiler
        original = compiler._compile

        def compile_one(obj, src, ext, cc_args, extra_postargs, pp_opts):
            flags = CXX_FLAGS if src.endswith(".cpp") else C_FLAGS
            return original(obj, src, ext, cc_args, flags, pp_opts)

        def compile_all(sources, output_dir=None, macros=None, include_dirs=None, debug=0, extra_preargs=None,
                        extra_postargs=None, depends=None):
            macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
                output_dir, macros, include_dirs, sources, depends, extra_postargs)
            cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)
            # OpenVDB's C++ first: it takes longest
            todo = sorted((obj for obj in objects if obj in build), key=lambda obj: not build[obj][0].endswith(".cpp"))
            with ThreadPoolExecutor(os.cpu_count()) as pool:
                jobs = [pool.submit(compile_one, obj, *build[obj], cc_args, extra_postargs, pp_opts) for obj in todo]
                for job in jobs:
                    job.result()
            return objects

        compiler._compile = compile_one
        compiler.compile = compile_all
        for flag in ("-g", "-O2", "-Wstrict-prototypes"):  # from Python's own build flags (-g doubled OpenVDB's time)
            for attr in ("compiler", "compiler_so", "compiler_cxx", "compiler_so_cxx"):   # the last two: setuptools 72+
                args = getattr(compiler, attr, None) or []
                while flag in args:
                    args.remove(flag)
        super().build_extensions()


VERSION = re.search(r'__version__ = "([^"]+)"', open("addon/tsubu/__init__.py").read()).group(1)

core = Extension(
    "tsubu._core",
    sources=sorted(glob.glob("csrc/core/*.c")) + sorted(glob.glob("csrc/python/*.c")) + ["csrc/vdb/tsubu_vdb.cpp"],
    include_dirs=["csrc", numpy.get_include()],
    # a changed header rebuilds the module (setuptools compares only the sources' times otherwise, and a module
    # built before the header changed would be kept)
    depends=sorted(glob.glob("csrc/*/*.h")),
    libraries=["openvdb", "Imath-3_1", "tbb", "z", "qhull_r", "stdc++", "m"],
    extra_link_args=["-fopenmp"],
)

setup(
    name="tsubu",
    version=VERSION,
    license="GPL-2.0-or-later",
    package_dir={"": "addon"},
    packages=["tsubu"],
    ext_modules=[core],
    cmdclass={"build_ext": BuildExt},
)
