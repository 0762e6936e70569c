"""Build the Cython kernels: every ``.pyx`` below ``solver/`` and ``games/`` becomes an extension module.

The repository keeps ``solver/``, ``games/`` and ``data/`` at the top; installed, they live under
one distinctive namespace (``gamesolver.solver``, ``gamesolver.games``, ``gamesolver.data``), so
nothing generic such as ``data`` or ``games`` lands in site-packages, and a user's ``data.py`` or
``solver.py`` in the working folder cannot shadow them.

Compiler directives are set here once for the whole build. OpenMP is used when the
compiler supports it (set SOLVER_NO_OPENMP=1 to build without it). The modules are translated
and compiled on every core, up to 8 (set SOLVER_BUILD_JOBS=N to choose). Cython's support code
goes into one shared module instead of into each kernel, and nothing is compiled with debugging
information (SOLVER_DEBUG_INFO=1 keeps it): on two cores the whole build took 62-63 s against 118-124 s
with neither (two builds of each, alternating, same machine; 1.9x).
"""
import glob
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

import Cython
import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "cdivision": True,
    "initializedcheck": False,
    "nonecheck": False,
}


def compiler_has_openmp() -> bool:
    """Try to compile and link a tiny OpenMP program with the default C compiler."""
    if os.environ.get("SOLVER_NO_OPENMP") or sys.platform == "win32":
        return False
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc.split()[0]) is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "t.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}\n")
        try:
            done = subprocess.run(
                cc.split() + ["-fopenmp", src, "-o", os.path.join(tmp, "t")],
                capture_output=True,
                timeout=60,
            )
        except (OSError, subprocess.SubprocessError):
            return False
        return done.returncode == 0


openmp = compiler_has_openmp()
# no debugging information (Python's own flags ask for it): the kernels compile about a quarter
# faster and the modules are smaller; SOLVER_DEBUG_INFO=1 keeps it, for a debugger or a profile by line
debug_info = [] if os.environ.get("SOLVER_DEBUG_INFO") == "1" else ["-g0"]
compile_args = ["-O3"] + debug_info + (["-fopenmp"] if openmp else [])
link_args = ["-fopenmp"] if openmp else []
macros = [("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]

NAMESPACE = "gamesolver"
TOP = ("solver", "games", "data")


def staged_includes() -> str:
    """A folder where the .pxd files appear under their installed names (gamesolver/solver/...),
    so that a game's kernel can cimport the engine's interface by the name it has at run time."""
    root = os.path.join("build", "pxd")
    for top in ("solver", "games"):
        for pxd in glob.glob(os.path.join(top, "**", "*.pxd"), recursive=True):
            dest = os.path.join(root, NAMESPACE, pxd)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(pxd, dest)
    for folder, _, _ in os.walk(os.path.join(root, NAMESPACE)):
        open(os.path.join(folder, "__init__.pxd"), "a").close()
    return root


def module_name(path: str) -> str:
    return NAMESPACE + "." + os.path.splitext(path)[0].replace(os.sep, ".")


sources = sorted(glob.glob(os.path.join("solver", "**", "*.pyx"), recursive=True)
                 + glob.glob(os.path.join("games", "**", "*.pyx"), recursive=True))
# The fort rules' generator once more, for x86-64 CPUs with POPCNT and BMI2 (games/ur/_fort_bmi2.pyx
# includes games/ur/_fort.pyx whole; games.ur.kernel picks it at run time where the CPU runs it well).
# Other architectures (32-bit x86 too: it has no 64-bit PDEP) build the portable module alone.
BMI2 = os.path.join("games", "ur", "_fort_bmi2.pyx")
POPCNT = os.path.join("games", "ur", "_fort_popcnt.pyx")
x86_64 = platform.machine().lower() in ("x86_64", "amd64") and sys.platform != "win32"
if not x86_64:
    sources.remove(BMI2)
    sources.remove(POPCNT)
extra_args = {BMI2: ["-mpopcnt", "-mbmi2"], POPCNT: ["-mpopcnt"]}
# Cython's own support code (memoryviews, their slicing and copying, the common helpers) once, in a
# module of its own that every kernel imports, instead of a copy of about a megabyte of C in each of
# them: the build compiles it once, not once per kernel. Cython 3.1 brought that; an older Cython
# (a build without isolation, on a machine that has one) builds the kernels as before.
SHARED = f"{NAMESPACE}.solver._cyutility"
shared = tuple(int(p) for p in re.findall(r"\d+", Cython.__version__)[:2]) >= (3, 1)
extensions = ([Extension(SHARED, [os.path.join("solver", "_cyutility.c")], extra_compile_args=compile_args,
                         define_macros=macros)] if shared else []) + [
    Extension(
        module_name(path),
        [path],
        include_dirs=[np.get_include()],
        extra_compile_args=compile_args + extra_args.get(path, []),
        extra_link_args=link_args,
        define_macros=macros,
    )
    for path in sources
]


def build_jobs() -> int:
    asked = os.environ.get("SOLVER_BUILD_JOBS", "")
    if asked:
        if not asked.isdigit() or int(asked) < 1:
            sys.exit(f"SOLVER_BUILD_JOBS must be a whole number of at least 1; got {asked!r}")
        return int(asked)
    return max(1, min(8, os.cpu_count() or 1))


jobs = build_jobs()
packages = [f"{NAMESPACE}.{p}" for p in find_packages(include=[f"{t}*" for t in TOP])]

setup(
    packages=packages,
    package_dir={f"{NAMESPACE}.{t}": t for t in TOP},
    ext_modules=cythonize(
        extensions,
        compiler_directives=DIRECTIVES,
        compile_time_env={"HAVE_OPENMP": openmp},
        include_path=[staged_includes(), "."],
        nthreads=jobs if jobs > 1 else 0,
        **({"shared_utility_qualified_name": SHARED} if shared else {}),
    ),
    options={"build_ext": {"parallel": jobs}},
)
