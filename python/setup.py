"""Builds the tally module with the project's CMake (one build definition: python/CMakeLists.txt)
and hands the result to setuptools. Needs cmake, a C compiler and Python's headers; CUDA is
built in when nvcc is found (as in the project's own build). Extra CMake arguments:
TALLY_CMAKE_ARGS="-DTALLY_CUDA=OFF" pip install --no-build-isolation ./python"""
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not os.path.exists(os.path.join(ROOT, "include", "tally.h")):
            sys.exit("tally: build from a checkout of the tally repository (%s has no "
                     "include/tally.h)" % ROOT)
        tmp = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        cmake = ["cmake", "-S", ROOT, "-B", tmp, "-DCMAKE_BUILD_TYPE=Release",
                 "-DTALLY_BUILD_TESTS=OFF", "-DTALLY_BUILD_CLI=OFF", "-DTALLY_BUILD_BENCH=OFF",
                 "-DPython3_EXECUTABLE=" + sys.executable]
        cmake += shlex.split(os.environ.get("TALLY_CMAKE_ARGS", ""))
        if os.path.isdir("/usr/local/cuda/bin"):
            os.environ["PATH"] = os.environ.get("PATH", "") + os.pathsep + "/usr/local/cuda/bin"
        subprocess.check_call(cmake)
        subprocess.check_call(["cmake", "--build", tmp, "--target", "tally_python",
                               "-j", str(os.cpu_count() or 2)])
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(tmp, "python", "tally", "_tally.abi3.so"), dest)


setup(ext_modules=[Extension("tally._tally", sources=[], py_limited_api=True)],
      cmdclass={"build_ext": CMakeBuild})
