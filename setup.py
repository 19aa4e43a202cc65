"""Builds the shardpack extension (shardpack._shardpack) with CMake for `pip install .`.

The metadata is in pyproject.toml. The CMake build goes to build/python-wheel, or to the folder
SHARDPACK_BUILD_DIR names (scripts/test.sh passes its Release build so nothing compiles twice).
SHARDPACK_BUILD_JOBS sets the parallel jobs (default: all cores).
"""

import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def configured_python(build_dir):
    """The Python a build folder's module is built for: its CMake cache's, else CMakeLists.txt's default."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as cache:
            for line in cache:
                if line.startswith("Python_EXECUTABLE:"):
                    return line.split("=", 1)[1].strip()
    except FileNotFoundError:
        pass
    venv = os.path.join(ROOT, "build", "venv", "bin", "python")
    return venv if os.path.exists(venv) else shutil.which("python3") or sys.executable


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.path.abspath(os.environ.get("SHARDPACK_BUILD_DIR") or os.path.join(ROOT, "build", "python-wheel"))
        configure = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release"]
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            # A build of its own needs only the library and the module.
            # Nor Arrow's Parquet library (docs/formats/parquet.md): the wheel would carry its 60 MB.
            configure += ["-DSHARDPACK_BUILD_TESTS=OFF", "-DSHARDPACK_BUILD_BENCHMARKS=OFF", "-DSHARDPACK_PARQUET=OFF"]
        # The module is built for the interpreter the build folder was configured with (CMakeLists.txt:
        # build/venv's, made from Debian's python3), which serves every venv made from the same
        # interpreter (their pythons are links to it). Any other interpreter gets a module of its own ABI.
        if os.path.realpath(sys.executable) != os.path.realpath(configured_python(build_dir)):
            configure.append("-DPython_EXECUTABLE=" + sys.executable)
        jobs = os.environ.get("SHARDPACK_BUILD_JOBS") or str(os.cpu_count() or 1)
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "_shardpack", "-j", jobs])
        built = os.path.join(build_dir, "python", "shardpack")
        module = next(f for f in os.listdir(built) if f.startswith("_shardpack") and f.endswith(".so"))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(built, module), target)


setup(
    ext_modules=[Extension("shardpack._shardpack", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own build folders, kept apart from the CMake builds in build/.
    options={"build": {"build_base": "build/setuptools"}, "egg_info": {"egg_base": "build"}},
)
