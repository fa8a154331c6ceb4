"""Runs the Python tests against the module built in BUILD_DIR (the folder that holds tally/):
    python3 run_tests.py BUILD_DIR [pytest arguments]
Exits 77 (ctest: skipped) when pytest or NumPy is missing, saying which."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(sys.argv[1]))
missing = []
for name in ("pytest", "numpy"):
    try:
        __import__(name)
    except ImportError:
        missing.append(name)
if missing:
    print("python tests skipped: %s not installed (Debian: %s)"
          % (", ".join(missing), " ".join("python3-" + m for m in missing)))
    sys.exit(77)
import pytest  # noqa: E402

os.environ["PYTHONPATH"] = os.path.abspath(sys.argv[1]) + os.pathsep + os.environ.get("PYTHONPATH", "")
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-rs", here] + sys.argv[2:]))
