/* Docstrings of the tally module (help(tally.sum) shows them). Each says what is exact and where
 * tally differs from NumPy. */
#ifndef TALLY_PY_DOCS_H
#define TALLY_PY_DOCS_H

#define TPY_ARRAYS                                                                               \
    "a: any array: the buffer protocol (NumPy, array.array, memoryview, mmap), any strides\n"     \
    "(non-contiguous host arrays are copied first), or a GPU array through\n"                     \
    "__cuda_array_interface__ / __dlpack__ (CuPy, PyTorch, JAX), read in place on a CUDA\n"        \
    "context. Types: int8..int64, uint8..uint64, float32, float64, bool.\n"

#define TPY_AXIS                                                                                 \
    "axis: None (every element) or one axis; with an axis the results come as a NumPy array\n"    \
    "of the remaining shape (one batched call: tally_reduce_rows).\n"

#define TPY_CTX                                                                                  \
    "omit_nan: skip NaN values (NumPy's nan* functions).\n"                                       \
    "ctx: a tally.Context; default: the thread's current or default context.\n"

#define TPY_SIG(name, extra) #name "(a, axis=None, *, " extra "omit_nan=False, ctx=None)\n--\n\n"

#define doc_sum                                                                                 \
    TPY_SIG(sum, "")                                                                             \
    "Sum of the elements, exact.\n\n"                                                            \
    "Integers: the exact sum as a Python int (int64 range for signed input, uint64 for\n"        \
    "unsigned); OverflowError when it does not fit (NumPy wraps around silently).\n"             \
    "Floats: the exact sum rounded once (correctly rounded) to a float64, also for float32\n"    \
    "input (NumPy returns float32 and rounds at every pairwise step). The result does not\n"     \
    "depend on thread count, SIMD path, GPU or memory layout. NaN gives NaN; +inf with -inf\n"   \
    "gives NaN. Empty: 0.\n\n" TPY_ARRAYS TPY_AXIS TPY_CTX                                       \
    "Returns a Python int or float (not a NumPy scalar); with axis, an int64/uint64/float64\n"   \
    "array."
#define doc_nansum                                                                              \
    TPY_SIG(nansum, "")                                                                          \
    "sum(a, omit_nan=True): the exact sum of the non-NaN elements (all NaN or empty: 0.0)."
#define doc_prod                                                                                \
    TPY_SIG(prod, "")                                                                            \
    "Product of the elements.\n\n"                                                               \
    "Integers: exact (a Python int); OverflowError when it does not fit int64/uint64 (NumPy\n"   \
    "wraps). Floats: computed in float64 in a fixed order (blocks of 4096 elements), so the\n"   \
    "same bits whatever the thread count, but not correctly rounded; float32 input gives a\n"    \
    "float64 product. Empty: 1.\n\n" TPY_ARRAYS TPY_AXIS TPY_CTX
#define doc_nanprod TPY_SIG(nanprod, "") "prod(a, omit_nan=True): NaN counts as 1."
#define doc_min                                                                                 \
    TPY_SIG(min, "")                                                                             \
    "Least element (exact: the element itself).\n\n"                                             \
    "NaN propagates (as in NumPy); -0.0 counts as less than +0.0. Empty: ValueError (as in\n"    \
    "NumPy). Returns a Python int, float or bool; with axis, an array of a's dtype.\n\n"         \
    TPY_ARRAYS TPY_AXIS TPY_CTX
#define doc_max TPY_SIG(max, "") "Greatest element; see min (+0.0 counts as greater than -0.0)."
#define doc_nanmin                                                                              \
    TPY_SIG(nanmin, "")                                                                          \
    "min(a, omit_nan=True): the least non-NaN element; all NaN or empty: ValueError (NumPy\n"    \
    "warns and returns nan)."
#define doc_nanmax TPY_SIG(nanmax, "") "max(a, omit_nan=True); see nanmin."
#define doc_argmin                                                                              \
    TPY_SIG(argmin, "")                                                                          \
    "Index of the first least element (in C order of a). A NaN counts as the least (NumPy).\n"   \
    "-0.0 counts as less than +0.0 (NumPy takes the first zero). Empty: ValueError.\n\n"         \
    TPY_ARRAYS TPY_AXIS TPY_CTX
#define doc_argmax TPY_SIG(argmax, "") "Index of the first greatest element; see argmin."
#define doc_nanargmin TPY_SIG(nanargmin, "") "argmin(a, omit_nan=True); all NaN: ValueError."
#define doc_nanargmax TPY_SIG(nanargmax, "") "argmax(a, omit_nan=True); all NaN: ValueError."
#define doc_mean                                                                                \
    TPY_SIG(mean, "")                                                                            \
    "Mean: the correctly rounded sum divided by the count, a float64 (the same bits on every\n"  \
    "backend). Empty: ValueError (NumPy warns and returns nan).\n\n" TPY_ARRAYS TPY_AXIS TPY_CTX
#define doc_nanmean TPY_SIG(nanmean, "") "mean(a, omit_nan=True): the mean of the non-NaN elements."
#define doc_var                                                                                 \
    "var(a, axis=None, *, ddof=0, omit_nan=False, ctx=None)\n--\n\n"                             \
    "Variance: the exact sum of squared deviations from the mean, divided by n - ddof (ddof=0:\n" \
    "population, NumPy's default; 1: sample). Each deviation is rounded to float64 once, its\n"   \
    "square is kept exactly and the sum is exact, so the result is accurate to the last bits\n"   \
    "and identical on every backend. n <= ddof or empty: ValueError (NumPy warns and returns\n"   \
    "nan or inf).\n\n" TPY_ARRAYS TPY_AXIS TPY_CTX
#define doc_nanvar                                                                              \
    "nanvar(a, axis=None, *, ddof=0, omit_nan=True, ctx=None)\n--\n\n"                           \
    "var of the non-NaN elements."
#define doc_std                                                                                 \
    "std(a, axis=None, *, ddof=0, omit_nan=False, ctx=None)\n--\n\n"                             \
    "Standard deviation: the square root of var (see var)."
#define doc_nanstd                                                                              \
    "nanstd(a, axis=None, *, ddof=0, omit_nan=True, ctx=None)\n--\n\n"                           \
    "std of the non-NaN elements."
#define doc_count                                                                               \
    TPY_SIG(count, "")                                                                           \
    "Number of elements; with omit_nan, of non-NaN elements (an int).\n\n" TPY_ARRAYS TPY_AXIS  \
    TPY_CTX
#define doc_nancount TPY_SIG(nancount, "") "count(a, omit_nan=True): the non-NaN elements."
#define doc_bitwise_and                                                                         \
    TPY_SIG(bitwise_and, "")                                                                     \
    "Bitwise AND of every element (numpy.bitwise_and.reduce); integer and bool arrays only\n"    \
    "(TypeError for floats). Empty: all ones.\n\n" TPY_ARRAYS TPY_AXIS TPY_CTX
#define doc_bitwise_or TPY_SIG(bitwise_or, "") "Bitwise OR of every element; empty: 0."
#define doc_bitwise_xor TPY_SIG(bitwise_xor, "") "Bitwise XOR of every element; empty: 0."
#define doc_reduce                                                                              \
    "reduce(a, ops, axis=None, *, ddof=0, omit_nan=False, ctx=None)\n--\n\n"                     \
    "Several reductions fused in one pass over the data (two when var/std is asked).\n\n"        \
    "ops: names, as a list or one comma-separated string: sum, prod, min, max, and, or, xor,\n"  \
    "count, argmin, argmax, mean, var, std. Returns a dict from each name to its value (as the\n" \
    "single functions return it), e.g. reduce(prices, 'sum,min,max') -> {'sum': ..., 'min':\n"  \
    "..., 'max': ...}. Raises the first failure (an empty min, an overflowing sum).\n\n"         \
    TPY_ARRAYS TPY_AXIS TPY_CTX

#define TPY_SCAN(name) #name "(a, axis=None, *, exclusive=False, initial=None, out=None, ctx=None)\n--\n\n"
#define TPY_SCAN_ARGS                                                                            \
    "axis: None (every element in C order, a 1-D result, as NumPy) or one axis.\n"               \
    "exclusive: out[0] = initial (default: the identity) and out[i] = initial op a[0] op ..\n"   \
    "op a[i-1] (not in NumPy). initial: needs exclusive=True.\n"                                 \
    "out: an array of the result's shape and dtype to write into (may be a itself).\n"          \
    "ctx: a tally.Context; default: the thread's current or default context.\n"               \
    "On a GPU array the result is made with the array's own library (torch.empty_like,\n"      \
    "cupy.empty_like) and stays on the GPU.\n"
#define doc_cumsum                                                                              \
    TPY_SCAN(cumsum)                                                                             \
    "Running sums (inclusive prefix sums), NumPy's cumsum.\n\n"                                  \
    "Integers (and bool): int64 / uint64 results as in NumPy, exact; OverflowError when a\n"     \
    "running sum does not fit (NumPy wraps around). Not on GPU arrays (the check runs on the\n" \
    "host). Floats: the input's dtype, evaluated in a fixed order (blocks of 4096 elements,\n"    \
    "groups of 16 within them; tally.h gives it and its error bound), so the bits do not\n"     \
    "depend on the thread count; they can differ in the last bits from NumPy's loop.\n\n"       \
    TPY_SCAN_ARGS
#define doc_cumprod                                                                             \
    TPY_SCAN(cumprod)                                                                            \
    "Running products, NumPy's cumprod: integers in int64/uint64, exact, OverflowError on\n"     \
    "overflow; floats in the input's dtype, deterministic (blocks of 4096 as cumsum).\n\n"       \
    TPY_SCAN_ARGS
#define doc_cummin                                                                              \
    TPY_SCAN(cummin)                                                                             \
    "Running minima (numpy.minimum.accumulate), in the input's dtype; NaN propagates.\n\n"       \
    TPY_SCAN_ARGS
#define doc_cummax                                                                              \
    TPY_SCAN(cummax)                                                                             \
    "Running maxima (numpy.maximum.accumulate), in the input's dtype; NaN propagates.\n\n"       \
    TPY_SCAN_ARGS

#define doc_info                                                                                \
    "info()\n--\n\n"                                                                             \
    "What this tally offers: {'version', 'backends': {'cpu': True, 'cuda': bool, 'vulkan':\n"     \
    "bool} (built and usable here), 'cpu_isa', 'cpu_threads', 'gil_released_from_bytes',\n"      \
    "'cuda_device' (when a GPU is usable)}."

#define doc_module                                                                              \
    "tally: exact, parallel reductions and prefix scans for NumPy, CuPy and PyTorch arrays.\n\n" \
    "    import numpy as np, tally\n"                                                            \
    "    x = np.random.rand(10**8).astype(np.float32)\n"                                         \
    "    tally.sum(x)          # the exact sum, rounded once: the same bits on any machine\n"      \
    "    tally.reduce(x, 'sum,min,max')\n"                                                      \
    "    tally.cumsum(x)\n\n"                                                                     \
    "Functions follow NumPy's names and dtype rules except where exactness needs otherwise:\n"   \
    "  - integer sums and products are exact; OverflowError when the result does not fit\n"    \
    "    int64/uint64 (NumPy wraps around);\n"                                                   \
    "  - float sums are correctly rounded and returned as float64, also for float32 input;\n"  \
    "  - scalar results are Python ints/floats/bools, not NumPy scalars;\n"                     \
    "  - empty min/max/argmin/argmax raise ValueError (as NumPy), and so do empty mean/var\n"   \
    "    and var with n <= ddof (NumPy warns and returns nan);\n"                               \
    "  - min/max/argmin/argmax order -0.0 before +0.0 (IEEE 754-2019 minimum/maximum);\n"       \
    "  - nan* functions skip NaN (omit_nan=True); all-NaN nanmin/nanmax raise ValueError;\n"   \
    "  - float cumsum/cumprod are evaluated in a fixed order (blocks of 4096, groups of 16:\n"  \
    "    deterministic, may differ from NumPy in the last bits); integer cumsum/cumprod\n"     \
    "    raise OverflowError on overflow;\n"                                                   \
    "  - axis is None or one int (no tuples, keepdims, dtype= or where=).\n"                     \
    "The GIL is released while tally works (arrays of 64 KiB and more). Errors carry tally's\n" \
    "message: OverflowError, ValueError (empty, bad arguments), TypeError (types),\n"           \
    "MemoryError, RuntimeError (backend not available or failed)."

#endif
