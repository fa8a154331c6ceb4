/* The tally module: NumPy-like reductions and scans over libtally. Every function takes an array
 * (buffer protocol, __cuda_array_interface__ or DLPack), hands contiguous memory to libtally
 * (copying strided host arrays first), and runs with the GIL released for arrays of
 * TPY_GIL_BYTES and more. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "context.h"
#include "docs.h"

/* Below this many bytes the work is shorter than releasing and taking back the GIL. */
#define TPY_GIL_BYTES (64u * 1024u)

/* What the last call of this thread handed to libtally (tally._last_call, for tests that show
 * that GPU arrays are read in place). */
static _Thread_local struct {
    uintptr_t pointer;
    int device;
    int copied;
} last_call;

/* ---- arguments ------------------------------------------------------------------------------- */
/* Fills out[i] (borrowed, NULL when absent) for names[i]; the first npos may be positional. */
static int parse(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                 const char *const *names, int npos, int nnames, int nrequired, PyObject **out)
{
    for (int i = 0; i < nnames; i++) out[i] = NULL;
    if (nargs > npos) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)",
                     fn, npos, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GetItem(kwnames, k);
        int found = -1;
        for (int i = 0; i < nnames && found < 0; i++)
            if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0) found = i;
        if (found < 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", fn, key);
            return -1;
        }
        if (out[found]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn,
                         names[found]);
            return -1;
        }
        out[found] = args[nargs + k];
    }
    for (int i = 0; i < nrequired; i++)
        if (!out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn, names[i]);
            return -1;
        }
    return 0;
}

static int bool_arg(PyObject *v, int dflt)
{
    if (!v) return dflt;
    return PyObject_IsTrue(v);
}

/* axis: None -> -1 (all elements); else normalised into [0, ndim). -2 on error. */
static int axis_arg(const char *fn, PyObject *v, int ndim)
{
    if (!v || v == Py_None) return -1;
    if (!PyLong_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s: axis must be None or an int (tally reduces over one "
                     "axis at a time), not %R", fn, v);
        return -2;
    }
    long ax = PyLong_AsLong(v);
    if (ax == -1 && PyErr_Occurred()) return -2;
    if (ax < -ndim || ax >= ndim) {
        PyErr_Format(PyExc_ValueError, "%s: axis %ld is out of bounds for an array of dimension %d",
                     fn, ax, ndim);
        return -2;
    }
    return (int)(ax < 0 ? ax + ndim : ax);
}

/* ---- values ---------------------------------------------------------------------------------- */
/* A reduction the module offers: a tally op, or the square root of the variance. */
typedef struct {
    tally_op op;
    int is_std;
} tpy_op;

static PyObject *result_to_py(const tally_result *r, tpy_op o, int is_bool)
{
    switch (o.op) {
    case TALLY_ARGMIN:
    case TALLY_ARGMAX: return PyLong_FromUnsignedLongLong(r->index);
    case TALLY_COUNT: return PyLong_FromUnsignedLongLong(r->value.u64);
    case TALLY_MIN:
    case TALLY_MAX:
        if (is_bool) return PyBool_FromLong(r->value.u64 != 0);
        break;
    default: break;
    }
    if (o.is_std) return PyFloat_FromDouble(sqrt(r->value.f64));
    switch (r->type) {
    case TALLY_I64: return PyLong_FromLongLong(r->value.i64);
    case TALLY_U64: return PyLong_FromUnsignedLongLong(r->value.u64);
    default: return PyFloat_FromDouble(r->value.f64);
    }
}

/* The element type of an axis result (NumPy's, except sums of floats: float64, exact). */
static tally_type out_type(tpy_op o, tally_type in, int in_bool, int *is_bool)
{
    *is_bool = 0;
    switch (o.op) {
    case TALLY_SUM:
    case TALLY_PROD:
        if (in == TALLY_F32 || in == TALLY_F64) return TALLY_F64;
        if (in_bool) return TALLY_I64; /* NumPy: a count of True */
        return in == TALLY_I8 || in == TALLY_I16 || in == TALLY_I32 || in == TALLY_I64
                   ? TALLY_I64 : TALLY_U64;
    case TALLY_MIN:
    case TALLY_MAX:
    case TALLY_AND:
    case TALLY_OR:
    case TALLY_XOR: *is_bool = in_bool; return in;
    case TALLY_COUNT:
    case TALLY_ARGMIN:
    case TALLY_ARGMAX: return TALLY_I64;
    default: return TALLY_F64;
    }
}

/* Stores result r as element i of a contiguous array of type t. */
static void store_result(char *base, uint64_t i, tally_type t, const tally_result *r, tpy_op o)
{
    union {
        int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
        int64_t i64; uint64_t u64; float f32; double f64;
    } v;
    uint64_t bits = (o.op == TALLY_ARGMIN || o.op == TALLY_ARGMAX) ? r->index : r->value.u64;
    double f = o.is_std ? sqrt(r->value.f64) : r->value.f64;
    switch (t) {
    case TALLY_I8: v.i8 = (int8_t)bits; break;
    case TALLY_U8: v.u8 = (uint8_t)bits; break;
    case TALLY_I16: v.i16 = (int16_t)bits; break;
    case TALLY_U16: v.u16 = (uint16_t)bits; break;
    case TALLY_I32: v.i32 = (int32_t)bits; break;
    case TALLY_U32: v.u32 = (uint32_t)bits; break;
    case TALLY_I64: v.i64 = (int64_t)bits; break;
    case TALLY_U64: v.u64 = bits; break;
    case TALLY_F32: v.f32 = (float)f; break; /* a min/max of f32: exact */
    case TALLY_F64: v.f64 = f; break;
    }
    size_t k = tally_type_size(t);
    memcpy(base + i * k, &v, k);
}

/* ---- reductions ------------------------------------------------------------------------------ */
static void note_call(const tpy_array *a, const void *data, int copied)
{
    last_call.pointer = (uintptr_t)data;
    last_call.device = a->device;
    last_call.copied = copied;
}

/* Reduces obj by ops[0..nops-1] over axis (None: every element). Fills out[i] with new
 * references. Returns 0, or -1 with an exception set. */
static int do_reduce(const char *fn, PyObject *obj, PyObject *axis_obj, const tpy_op *ops,
                     size_t nops, int omit_nan, int ddof, PyObject *ctx_obj, PyObject **out)
{
    tpy_array a;
    if (tpy_array_get(obj, &a, 0) < 0) return -1;
    int rc = -1, axis = axis_arg(fn, axis_obj, a.ndim);
    tpy_context *c = NULL;
    char *buf = NULL;
    tally_result stack_res[16], *res = stack_res;
    tally_op tops[16];
    if (axis == -2) goto done;
    if (nops > 16) {
        PyErr_Format(PyExc_ValueError, "%s: at most 16 ops at once", fn);
        goto done;
    }
    for (size_t i = 0; i < nops; i++) tops[i] = ops[i].op;
    if (a.ndim <= 1) axis = -1;
    if (!(c = tpy_context_for(ctx_obj, &a, fn))) goto done;
    tally_reduce_options ro = {omit_nan, ddof};
    const size_t k = a.itemsize;
    const int big = a.n * k >= TPY_GIL_BYTES;
    /* rows: the axis last; R rows of L */
    uint64_t L = axis < 0 ? a.n : (uint64_t)a.shape[axis];
    uint64_t R = 1;
    int perm[TPY_MAXDIM], np = 0;
    if (axis >= 0) {
        for (int d = 0; d < a.ndim; d++)
            if (d != axis) {
                perm[np++] = d;
                R *= (uint64_t)a.shape[d];
            }
        perm[np] = axis;
    } else {
        for (int d = 0; d < a.ndim; d++) perm[d] = d;
    }
    const int direct = tpy_is_c_contiguous(&a) && !a.swap && (axis < 0 || axis == a.ndim - 1);
    if (!direct && a.device >= 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: a GPU array must be C-contiguous%s (tally does not copy GPU arrays); "
                     "make it so first (x.contiguous(), cupy.ascontiguousarray)", fn,
                     axis >= 0 ? " and reduced over its last axis" : "");
        goto done;
    }
    if (!direct) {
        buf = malloc(a.n * k + 1);
        if (!buf) {
            PyErr_NoMemory();
            goto done;
        }
    }
    if (axis >= 0 && R * nops > 16) {
        res = malloc(R * nops * sizeof *res);
        if (!res) {
            res = stack_res;
            PyErr_NoMemory();
            goto done;
        }
    }
    const char *data = direct ? a.data : buf;
    note_call(&a, data, !direct);
    tally_status st;
    PyThreadState *ts = NULL;
    tpy_context_lock(c);
    if (big) ts = PyEval_SaveThread();
    if (!direct) tpy_gather(&a, perm, a.type, buf);
    tpy_context_use_stream(c, a.stream);
    if (axis < 0)
        st = tally_reduce_many(c->ctx, a.type, data, a.n, tops, nops, &ro, res);
    else
        st = tally_reduce_rows(c->ctx, a.type, data, R, L, L, tops, nops, &ro, res);
    if (a.stream) tpy_context_use_stream(c, 0);
    if (ts) PyEval_RestoreThread(ts);
    if (st != TALLY_OK) {
        tpy_raise(c, st, fn);
        tpy_context_unlock(c);
        goto done;
    }
    tpy_context_unlock(c);
    if (axis < 0) {
        for (size_t i = 0; i < nops; i++) {
            out[i] = result_to_py(&res[i], ops[i], a.is_bool);
            if (!out[i]) {
                for (size_t j = 0; j < i; j++) Py_CLEAR(out[j]);
                goto done;
            }
        }
    } else {
        int64_t shape[TPY_MAXDIM];
        for (int d = 0; d < np; d++) shape[d] = a.shape[perm[d]];
        for (size_t i = 0; i < nops; i++) {
            int ob;
            tally_type t = out_type(ops[i], a.type, a.is_bool, &ob);
            tpy_array o;
            out[i] = tpy_new_host_array(np, shape, t, ob, &o);
            if (!out[i]) {
                for (size_t j = 0; j < i; j++) Py_CLEAR(out[j]);
                goto done;
            }
            for (uint64_t r = 0; r < R; r++) store_result(o.data, r, t, &res[r * nops + i], ops[i]);
            tpy_array_release(&o);
        }
    }
    rc = 0;
done:
    if (res != stack_res) free(res);
    free(buf);
    Py_XDECREF((PyObject *)c);
    tpy_array_release(&a);
    return rc;
}

static const char *const reduce_names[] = {"a", "axis", "omit_nan", "ctx"};
static const char *const var_names[] = {"a", "axis", "ddof", "omit_nan", "ctx"};

static PyObject *reduce_entry(const char *fn, tpy_op op, int nan_default, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *v[5];
    int has_ddof = op.op == TALLY_VAR;
    int ddof = 0;
    if (has_ddof) {
        if (parse(fn, args, nargs, kwnames, var_names, 2, 5, 1, v) < 0) return NULL;
        if (v[2]) {
            long d = PyLong_AsLong(v[2]);
            if (d == -1 && PyErr_Occurred()) return NULL;
            if (d < 0 || d > 1000000000) {
                PyErr_Format(PyExc_ValueError, "%s: ddof = %ld (must be >= 0)", fn, d);
                return NULL;
            }
            ddof = (int)d;
        }
        v[2] = v[3];
        v[3] = v[4];
    } else if (parse(fn, args, nargs, kwnames, reduce_names, 2, 4, 1, v) < 0) {
        return NULL;
    }
    int omit = bool_arg(v[2], nan_default);
    if (omit < 0) return NULL;
    PyObject *out;
    if (do_reduce(fn, v[0], v[1], &op, 1, omit, ddof, v[3], &out) < 0) return NULL;
    return out;
}

#define REDUCTION(name, OP, STD, NAN)                                                             \
    static PyObject *py_##name(PyObject *m, PyObject *const *args, Py_ssize_t nargs,             \
                               PyObject *kwnames)                                                 \
    {                                                                                              \
        (void)m;                                                                                   \
        tpy_op o = {OP, STD};                                                                      \
        return reduce_entry("tally." #name, o, NAN, args, nargs, kwnames);                        \
    }
REDUCTION(sum, TALLY_SUM, 0, 0)
REDUCTION(prod, TALLY_PROD, 0, 0)
REDUCTION(min, TALLY_MIN, 0, 0)
REDUCTION(max, TALLY_MAX, 0, 0)
REDUCTION(argmin, TALLY_ARGMIN, 0, 0)
REDUCTION(argmax, TALLY_ARGMAX, 0, 0)
REDUCTION(mean, TALLY_MEAN, 0, 0)
REDUCTION(var, TALLY_VAR, 0, 0)
REDUCTION(std, TALLY_VAR, 1, 0)
REDUCTION(count, TALLY_COUNT, 0, 0)
REDUCTION(bitwise_and, TALLY_AND, 0, 0)
REDUCTION(bitwise_or, TALLY_OR, 0, 0)
REDUCTION(bitwise_xor, TALLY_XOR, 0, 0)
REDUCTION(nansum, TALLY_SUM, 0, 1)
REDUCTION(nanprod, TALLY_PROD, 0, 1)
REDUCTION(nanmin, TALLY_MIN, 0, 1)
REDUCTION(nanmax, TALLY_MAX, 0, 1)
REDUCTION(nanargmin, TALLY_ARGMIN, 0, 1)
REDUCTION(nanargmax, TALLY_ARGMAX, 0, 1)
REDUCTION(nanmean, TALLY_MEAN, 0, 1)
REDUCTION(nanvar, TALLY_VAR, 0, 1)
REDUCTION(nanstd, TALLY_VAR, 1, 1)
REDUCTION(nancount, TALLY_COUNT, 0, 1)

/* reduce(a, ops, axis=None, *, ddof=0, omit_nan=False, ctx=None) -> dict */
static const struct {
    const char *name;
    tpy_op op;
} op_names[] = {
    {"sum", {TALLY_SUM, 0}},       {"prod", {TALLY_PROD, 0}},     {"min", {TALLY_MIN, 0}},
    {"max", {TALLY_MAX, 0}},       {"and", {TALLY_AND, 0}},       {"or", {TALLY_OR, 0}},
    {"xor", {TALLY_XOR, 0}},       {"bitwise_and", {TALLY_AND, 0}}, {"bitwise_or", {TALLY_OR, 0}},
    {"bitwise_xor", {TALLY_XOR, 0}}, {"count", {TALLY_COUNT, 0}}, {"argmin", {TALLY_ARGMIN, 0}},
    {"argmax", {TALLY_ARGMAX, 0}}, {"mean", {TALLY_MEAN, 0}},     {"var", {TALLY_VAR, 0}},
    {"std", {TALLY_VAR, 1}},
};

static PyObject *py_reduce(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)m;
    static const char fn[] = "tally.reduce";
    static const char *const names[] = {"a", "ops", "axis", "ddof", "omit_nan", "ctx"};
    PyObject *v[6];
    if (parse(fn, args, nargs, kwnames, names, 3, 6, 2, v) < 0) return NULL;
    PyObject *list;
    if (PyUnicode_Check(v[1])) {
        PyObject *sep = PyUnicode_FromString(",");
        list = sep ? PyUnicode_Split(v[1], sep, -1) : NULL;
        Py_XDECREF(sep);
    } else {
        list = PySequence_List(v[1]);
    }
    if (!list) return NULL;
    Py_ssize_t n = PyList_Size(list);
    tpy_op ops[16];
    PyObject *keys[16];
    PyObject *result = NULL, *vals[16] = {0};
    if (n < 1 || n > 16) {
        PyErr_Format(PyExc_ValueError, "%s: ops must name 1 to 16 reductions, got %zd", fn, n);
        goto out;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PyList_GetItem(list, i);
        keys[i] = s;
        int found = 0;
        if (PyUnicode_Check(s))
            for (size_t j = 0; j < sizeof op_names / sizeof op_names[0] && !found; j++)
                if (PyUnicode_CompareWithASCIIString(s, op_names[j].name) == 0) {
                    ops[i] = op_names[j].op;
                    found = 1;
                }
        if (!found) {
            PyErr_Format(PyExc_ValueError,
                         "%s: unknown op %R (ops: sum, prod, min, max, and, or, xor, count, "
                         "argmin, argmax, mean, var, std)", fn, s);
            goto out;
        }
    }
    int ddof = 0;
    if (v[3]) {
        long d = PyLong_AsLong(v[3]);
        if (d == -1 && PyErr_Occurred()) goto out;
        if (d < 0 || d > 1000000000) {
            PyErr_Format(PyExc_ValueError, "%s: ddof = %ld (must be >= 0)", fn, d);
            goto out;
        }
        ddof = (int)d;
    }
    int omit = bool_arg(v[4], 0);
    if (omit < 0) goto out;
    if (do_reduce(fn, v[0], v[2], ops, (size_t)n, omit, ddof, v[5], vals) < 0) goto out;
    result = PyDict_New();
    for (Py_ssize_t i = 0; result && i < n; i++)
        if (PyDict_SetItem(result, keys[i], vals[i]) < 0) Py_CLEAR(result);
out:
    for (int i = 0; i < 16; i++) Py_XDECREF(vals[i]);
    Py_DECREF(list);
    return result;
}

/* ---- scans ----------------------------------------------------------------------------------- */
/* Index of the first running value of the row that overflowed its 64-bit type, or -1. The scan
 * wrapped modulo 2^64 (tally_scan's integer semantics); before the first overflow every value
 * is exact, so the first step whose exact result does not fit is found exactly. x: the scanned
 * values (64-bit), y: the scan; exclusive: y[i] = y[i-1] op x[i-1]. */
static int64_t first_overflow(tally_op op, int is_signed, const void *xv, const void *yv,
                              uint64_t n, int exclusive)
{
    const int64_t *xs = xv, *ys = yv;
    const uint64_t *xu = xv, *yu = yv;
    const uint64_t e = exclusive ? 1 : 0;
    if (op == TALLY_SUM) {
        uint64_t bad = 0;
        if (is_signed)
            for (uint64_t i = 1; i < n; i++)
                bad |= (uint64_t)((ys[i - 1] ^ ys[i]) & (xs[i - e] ^ ys[i]));
        else
            for (uint64_t i = 1; i < n; i++) bad |= (uint64_t)(yu[i] < yu[i - 1]) << 63;
        if (!(bad >> 63)) return -1;
        for (uint64_t i = 1; i < n; i++) {
            int64_t r;
            uint64_t u;
            if (is_signed ? __builtin_add_overflow(ys[i - 1], xs[i - e], &r)
                          : __builtin_add_overflow(yu[i - 1], xu[i - e], &u))
                return (int64_t)i;
        }
        return -1;
    }
    for (uint64_t i = 1; i < n; i++) { /* products */
        int64_t r;
        uint64_t u;
        if (is_signed ? __builtin_mul_overflow(ys[i - 1], xs[i - e], &r)
                      : __builtin_mul_overflow(yu[i - 1], xu[i - e], &u))
            return (int64_t)i;
    }
    return -1;
}

static int ranges_overlap(const tpy_array *a, const tpy_array *b)
{
    if (a->n == 0 || b->n == 0 || a->device != b->device) return 0;
    char *lo[2], *hi[2];
    const tpy_array *x[2] = {a, b};
    for (int j = 0; j < 2; j++) {
        lo[j] = hi[j] = x[j]->data;
        for (int d = 0; d < x[j]->ndim; d++) {
            int64_t span = (x[j]->shape[d] - 1) * x[j]->strides[d];
            if (span < 0) lo[j] += span;
            else hi[j] += span;
        }
        hi[j] += x[j]->itemsize;
    }
    return lo[0] < hi[1] && lo[1] < hi[0];
}

static int init_arg(const char *fn, PyObject *v, tally_type t, tally_scan_options *so)
{
    if (!v || v == Py_None) return 0;
    so->has_init = 1;
    if (t == TALLY_F32 || t == TALLY_F64) {
        so->init.f64 = PyFloat_AsDouble(v);
        return so->init.f64 == -1.0 && PyErr_Occurred() ? -1 : 0;
    }
    int is_signed = t == TALLY_I8 || t == TALLY_I16 || t == TALLY_I32 || t == TALLY_I64;
    int bits = (int)tally_type_size(t) * 8;
    if (is_signed) {
        long long x = PyLong_AsLongLong(v);
        if (x == -1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
            PyErr_Clear();
            goto range;
        }
        if (bits < 64 && (x < -(1ll << (bits - 1)) || x >= (1ll << (bits - 1)))) goto range;
        so->init.i64 = x;
    } else {
        unsigned long long x = PyLong_AsUnsignedLongLong(v);
        if (x == (unsigned long long)-1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
            PyErr_Clear();
            goto range;
        }
        if (bits < 64 && x >> bits) goto range;
        so->init.u64 = x;
    }
    return 0;
range:
    PyErr_Format(PyExc_OverflowError, "%s: initial = %R does not fit %s", fn, v,
                 tally_type_name(t));
    return -1;
}

static PyObject *do_scan(const char *fn, tally_op op, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    static const char *const names[] = {"a", "axis", "exclusive", "initial", "out", "ctx"};
    PyObject *v[6];
    if (parse(fn, args, nargs, kwnames, names, 2, 6, 1, v) < 0) return NULL;
    int exclusive = bool_arg(v[2], 0);
    if (exclusive < 0) return NULL;
    if (v[3] && v[3] != Py_None && !exclusive) {
        PyErr_Format(PyExc_ValueError, "%s: initial= needs exclusive=True (out[0] = initial)", fn);
        return NULL;
    }
    tpy_array a, o;
    memset(&o, 0, sizeof o);
    if (tpy_array_get(v[0], &a, 0) < 0) return NULL;
    PyObject *result = NULL;
    tpy_context *c = NULL;
    char *wbuf = NULL, *dbuf = NULL;
    int axis = axis_arg(fn, v[1], a.ndim);
    if (axis == -2) goto done;
    const int is_int = a.type != TALLY_F32 && a.type != TALLY_F64;
    const int is_signed = a.type == TALLY_I8 || a.type == TALLY_I16 || a.type == TALLY_I32 ||
                          a.type == TALLY_I64;
    const int arith = op == TALLY_SUM || op == TALLY_PROD;
    /* NumPy's result types: integer sums and products in 64 bits (bool: int64), floats and
     * min/max in the input type */
    int out_bool = 0;
    tally_type wt = a.type;
    if (arith && is_int) wt = is_signed || a.is_bool ? TALLY_I64 : TALLY_U64;
    else out_bool = a.is_bool;
    const size_t wk = tally_type_size(wt);
    if (a.ndim <= 1 && axis == 0) axis = -1;
    /* the result: 1-D over every element in C order (axis None), or a's shape */
    int ond = axis < 0 ? 1 : a.ndim;
    int64_t oshape[TPY_MAXDIM];
    if (axis < 0) oshape[0] = (int64_t)a.n;
    else memcpy(oshape, a.shape, sizeof(int64_t) * (size_t)a.ndim);
    if (v[4] && v[4] != Py_None) {
        if (tpy_array_get(v[4], &o, 1) < 0) goto done;
        int same = o.ndim == ond && o.type == wt && o.is_bool == out_bool;
        for (int d = 0; same && d < ond; d++) same = o.shape[d] == oshape[d];
        if (!same) {
            PyErr_Format(PyExc_ValueError,
                         "%s: out must be a %s array of the result's shape (%s of %d dimensions)",
                         fn, tpy_numpy_dtype(wt, out_bool), axis < 0 ? "1-D" : "the input's",
                         ond);
            goto done;
        }
        if (o.device != a.device) {
            PyErr_Format(PyExc_ValueError, "%s: out is on another device than a", fn);
            goto done;
        }
        result = Py_NewRef(v[4]);
    } else if (a.device >= 0) {
        if (a.ndim != ond) {
            PyErr_Format(PyExc_ValueError, "%s: a GPU array needs axis= or 1 dimension, or out=",
                         fn);
            goto done;
        }
        result = tpy_new_device_array_like(v[0], &o);
    } else {
        result = tpy_new_host_array(ond, oshape, wt, out_bool, &o);
    }
    if (!result) goto done;
    if (!(c = tpy_context_for(v[5], &a, fn))) goto done;
    tally_scan_options so;
    memset(&so, 0, sizeof so);
    so.exclusive = exclusive;
    if (init_arg(fn, v[3], wt, &so) < 0) goto done;
    uint64_t L = axis < 0 ? a.n : (uint64_t)a.shape[axis], R = L ? a.n / L : 0;
    int perm[TPY_MAXDIM], operm[TPY_MAXDIM], np = 0;
    for (int d = 0; d < a.ndim; d++)
        if (d != axis) perm[np++] = d;
    if (axis >= 0) perm[np] = axis;
    if (axis < 0) operm[0] = 0;
    else memcpy(operm, perm, sizeof(int) * (size_t)a.ndim);
    const int check = arith && is_int;
    const int in_order = axis < 0 || axis == a.ndim - 1;
    /* a is read in place when it is laid out as the scan needs; out is written in place when it
     * is C-contiguous (else through a buffer, then scattered) */
    const int d_direct = tpy_is_c_contiguous(&o) && in_order;
    const int overlap = ranges_overlap(&a, &o);
    /* out may be a itself (tally scans in place), unless the overflow check must read a after
     * the scan; any other overlap reads a through a copy */
    const int w_direct = wt == a.type && !a.swap && tpy_is_c_contiguous(&a) && in_order &&
                         (!overlap || (a.data == o.data && d_direct && !check));
    if (a.device >= 0) {
        if (check) {
            PyErr_Format(PyExc_TypeError,
                         "%s: integer sums and products of GPU arrays are not supported (tally "
                         "checks integer scans for overflow on the host)", fn);
            goto done;
        }
        if (!w_direct || !d_direct) {
            PyErr_Format(PyExc_ValueError,
                         "%s: GPU arrays (and out) must be C-contiguous and scanned along their "
                         "last axis (tally does not copy GPU arrays)", fn);
            goto done;
        }
    }
    /* Any other overlap of out with a: read a through a copy. */
    const int w_copy = !w_direct;
    if (w_copy && !(wbuf = malloc(a.n * wk + 1))) goto nomem;
    if (!d_direct && !(dbuf = malloc(a.n * wk + 1))) goto nomem;
    const char *w = w_copy ? wbuf : a.data;
    char *dst = d_direct ? o.data : dbuf;
    note_call(&a, w, w_copy);
    tally_status st = TALLY_OK;
    int64_t bad = -1;
    uint64_t bad_row = 0;
    PyThreadState *ts = NULL;
    tpy_context_lock(c);
    if (a.n * wk >= TPY_GIL_BYTES) ts = PyEval_SaveThread();
    if (w_copy) tpy_gather(&a, perm, wt, wbuf);
    tpy_context_use_stream(c, a.stream);
    for (uint64_t r = 0; r < R && st == TALLY_OK; r++) {
        st = tally_scan(c->ctx, op, wt, w + r * L * wk, dst + r * L * wk, L, &so);
        if (st == TALLY_OK && check && bad < 0) {
            bad = first_overflow(op, wt == TALLY_I64, w + r * L * wk, dst + r * L * wk, L,
                                 exclusive);
            bad_row = r;
        }
    }
    if (a.stream) tpy_context_use_stream(c, 0);
    if (st == TALLY_OK && bad < 0 && !d_direct) tpy_scatter(dbuf, &o, operm);
    if (ts) PyEval_RestoreThread(ts);
    if (st != TALLY_OK) tpy_raise(c, st, fn);
    tpy_context_unlock(c);
    if (st != TALLY_OK) goto fail;
    if (bad >= 0) {
        char where[64] = "";
        if (R > 1) snprintf(where, sizeof where, " of row %llu", (unsigned long long)bad_row);
        PyErr_Format(PyExc_OverflowError,
                     "%s: integer overflow: running value %lld%s does not fit %s (NumPy would "
                     "wrap around)", fn, (long long)bad, where, wt == TALLY_I64 ? "int64" : "uint64");
        goto fail;
    }
    goto done;
nomem:
    PyErr_NoMemory();
fail:
    Py_CLEAR(result);
done:
    if (PyErr_Occurred()) Py_CLEAR(result);
    free(wbuf);
    free(dbuf);
    Py_XDECREF((PyObject *)c);
    tpy_array_release(&o);
    tpy_array_release(&a);
    return result;
}

#define SCAN(name, OP)                                                                            \
    static PyObject *py_##name(PyObject *m, PyObject *const *args, Py_ssize_t nargs,             \
                               PyObject *kwnames)                                                 \
    {                                                                                              \
        (void)m;                                                                                   \
        return do_scan("tally." #name, OP, args, nargs, kwnames);                                 \
    }
SCAN(cumsum, TALLY_SUM)
SCAN(cumprod, TALLY_PROD)
SCAN(cummin, TALLY_MIN)
SCAN(cummax, TALLY_MAX)

/* ---- info ------------------------------------------------------------------------------------ */
static PyObject *py_info(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    PyObject *backends = PyDict_New(), *d = NULL;
    if (!backends) return NULL;
    for (int k = TALLY_BACKEND_CPU; k < TALLY_BACKEND_KIND_COUNT; k++) {
        PyObject *b = PyBool_FromLong(tally_backend_available((tally_backend_kind)k));
        PyDict_SetItemString(backends, tally_backend_name((tally_backend_kind)k), b);
        Py_DECREF(b);
    }
    tally_context *ctx = NULL;
    int threads = 0;
    if (tally_create(&ctx, &(tally_options){TALLY_BACKEND_CPU, 0, TALLY_ISA_AUTO, 0}) == TALLY_OK) {
        threads = tally_thread_count(ctx);
        tally_destroy(ctx);
    }
    d = Py_BuildValue("{s:s,s:N,s:s,s:i,s:s}", "version", tally_version(), "backends", backends,
                      "cpu_isa", tally_isa_name(tally_cpu_best_isa()), "cpu_threads", threads,
                      "gil_released_from_bytes", "65536");
    if (d) {
        PyObject *g = PyLong_FromLong(TPY_GIL_BYTES);
        PyDict_SetItemString(d, "gil_released_from_bytes", g);
        Py_DECREF(g);
    }
    if (d && tally_backend_available(TALLY_BACKEND_CUDA)) {
        tally_context *g = NULL;
        if (tally_create(&g, &(tally_options){TALLY_BACKEND_CUDA, 0, TALLY_ISA_AUTO, 0}) ==
            TALLY_OK) {
            PyObject *s = PyUnicode_FromString(tally_device_description(g));
            PyDict_SetItemString(d, "cuda_device", s);
            Py_XDECREF(s);
            tally_destroy(g);
        }
    }
    return d;
}

static PyObject *py_after_fork(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    tpy_after_fork_in_child();
    Py_RETURN_NONE;
}

static PyObject *py_last_call(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return Py_BuildValue("{s:K,s:i,s:O}", "pointer", (unsigned long long)last_call.pointer,
                         "device", last_call.device, "copied",
                         last_call.copied ? Py_True : Py_False);
}

/* ---- the module ------------------------------------------------------------------------------ */
#define FAST(name) {#name, (PyCFunction)(void (*)(void))py_##name, METH_FASTCALL | METH_KEYWORDS, doc_##name}

static PyMethodDef methods[] = {
    FAST(sum), FAST(prod), FAST(min), FAST(max), FAST(argmin), FAST(argmax), FAST(mean),
    FAST(var), FAST(std), FAST(count), FAST(bitwise_and), FAST(bitwise_or), FAST(bitwise_xor),
    FAST(nansum), FAST(nanprod), FAST(nanmin), FAST(nanmax), FAST(nanargmin), FAST(nanargmax),
    FAST(nanmean), FAST(nanvar), FAST(nanstd), FAST(nancount), FAST(reduce),
    FAST(cumsum), FAST(cumprod), FAST(cummin), FAST(cummax),
    {"info", py_info, METH_NOARGS, doc_info},
    {"_after_fork", py_after_fork, METH_NOARGS,
     "Called in the child of os.fork(): contexts made before it are not used again."},
    {"_last_call", py_last_call, METH_NOARGS,
     "What the calling thread's last call handed to libtally: {'pointer', 'device', 'copied'}\n"
     "(device -1: host memory; copied: the extension copied the array first). For tests."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "tally._tally", doc_module, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__tally(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (tpy_context_init_type(m) < 0 ||
        PyModule_AddStringConstant(m, "__version__", tally_version()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    /* os.register_at_fork(after_in_child=_after_fork) */
    PyObject *os = PyImport_ImportModule("os");
    PyObject *reg = os ? PyObject_GetAttrString(os, "register_at_fork") : NULL;
    PyObject *hook = PyObject_GetAttrString(m, "_after_fork");
    PyObject *args = PyTuple_New(0), *kw = hook ? Py_BuildValue("{s:O}", "after_in_child", hook) : NULL;
    PyObject *r = (reg && args && kw) ? PyObject_Call(reg, args, kw) : NULL;
    int ok = r != NULL;
    Py_XDECREF(r);
    Py_XDECREF(kw);
    Py_XDECREF(args);
    Py_XDECREF(hook);
    Py_XDECREF(reg);
    Py_XDECREF(os);
    if (!ok) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
