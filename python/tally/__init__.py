"""tally: exact, parallel reductions and prefix scans for NumPy, CuPy and PyTorch arrays.

The functions are those of the C extension tally._tally (see help(tally.sum)); this file only
re-exports them so that ``import tally`` finds them and type checkers find the stubs.
"""
from ._tally import *  # noqa: F401,F403
from ._tally import __doc__, __version__, _last_call  # noqa: F401

__all__ = [
    "Context", "info",
    "sum", "prod", "min", "max", "argmin", "argmax", "mean", "var", "std", "count",
    "bitwise_and", "bitwise_or", "bitwise_xor",
    "nansum", "nanprod", "nanmin", "nanmax", "nanargmin", "nanargmax", "nanmean", "nanvar",
    "nanstd", "nancount",
    "reduce", "cumsum", "cumprod", "cummin", "cummax",
]
