/* Arrays from the buffer protocol, __cuda_array_interface__ and DLPack; strided copies. */
#include "array.h"

#include <string.h>

/* ---- DLPack (dlpack.h, ABI version 0.x/1.x: the unversioned DLManagedTensor) ------------------ */
typedef struct {
    int32_t device_type; /* 1 CPU, 2 CUDA, 3 CUDA pinned host, 13 CUDA managed */
    int32_t device_id;
} tpy_dldevice;
typedef struct {
    uint8_t code; /* 0 int, 1 uint, 2 float, 6 bool */
    uint8_t bits;
    uint16_t lanes;
} tpy_dldtype;
typedef struct {
    void *data;
    tpy_dldevice device;
    int32_t ndim;
    tpy_dldtype dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL: C-contiguous */
    uint64_t byte_offset;
} tpy_dltensor;
typedef struct tpy_dlmanaged {
    tpy_dltensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct tpy_dlmanaged *self);
} tpy_dlmanaged;

enum { DL_CPU = 1, DL_CUDA = 2, DL_CUDA_HOST = 3, DL_CUDA_MANAGED = 13 };

static const int host_little_endian = 1;
#define HOST_IS_LITTLE (*(const char *)&host_little_endian == 1)

/* tally type of an integer or float of `bytes` bytes; -1 if none */
static int type_of(char kind, size_t bytes)
{
    switch (kind) {
    case 'i':
        return bytes == 1 ? TALLY_I8 : bytes == 2 ? TALLY_I16 : bytes == 4 ? TALLY_I32
             : bytes == 8 ? TALLY_I64 : -1;
    case 'u':
        return bytes == 1 ? TALLY_U8 : bytes == 2 ? TALLY_U16 : bytes == 4 ? TALLY_U32
             : bytes == 8 ? TALLY_U64 : -1;
    case 'f': return bytes == 4 ? TALLY_F32 : bytes == 8 ? TALLY_F64 : -1;
    case 'b': return bytes == 1 ? TALLY_U8 : -1;
    default: return -1;
    }
}

static int set_type(tpy_array *a, char kind, size_t bytes, const char *what)
{
    int t = type_of(kind, bytes);
    if (t < 0) {
        PyErr_Format(PyExc_TypeError,
                     "tally: element type %s is not supported (tally takes int8..int64, "
                     "uint8..uint64, float32, float64 and bool)", what);
        return -1;
    }
    a->type = (tally_type)t;
    a->is_bool = kind == 'b';
    a->itemsize = bytes;
    return 0;
}

static int count_elements(tpy_array *a)
{
    uint64_t n = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (a->shape[d] < 0) {
            PyErr_SetString(PyExc_ValueError, "tally: an array reports a negative dimension");
            return -1;
        }
        n *= (uint64_t)a->shape[d];
    }
    a->n = n;
    return 0;
}

/* ---- the buffer protocol ---------------------------------------------------------------------- */
static int from_buffer(PyObject *obj, tpy_array *a, int writable)
{
    int flags = PyBUF_RECORDS_RO | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &a->view, flags) < 0) return -1;
    a->has_view = 1;
    Py_buffer *v = &a->view;
    const char *f = v->format ? v->format : "B";
    char order = '@';
    if (*f == '@' || *f == '=' || *f == '<' || *f == '>' || *f == '!') order = *f++;
    char kind;
    switch (*f) {
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': kind = 'i'; break;
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': kind = 'u'; break;
    case 'f': case 'd': kind = 'f'; break;
    case '?': kind = 'b'; break;
    default: kind = '?'; break;
    }
    char what[64];
    snprintf(what, sizeof what, "'%s' (buffer format)", v->format ? v->format : "B");
    if (f[0] == 0 || f[1] != 0) kind = '?';
    if (set_type(a, kind, (size_t)v->itemsize, what) < 0) return -1;
    a->swap = ((order == '>' || order == '!') && HOST_IS_LITTLE) ||
              (order == '<' && !HOST_IS_LITTLE);
    if (a->itemsize == 1) a->swap = 0;
    if (v->ndim > TPY_MAXDIM) {
        PyErr_Format(PyExc_ValueError, "tally: %d dimensions (at most %d)", v->ndim, TPY_MAXDIM);
        return -1;
    }
    a->ndim = v->ndim;
    for (int d = 0; d < v->ndim; d++) {
        a->shape[d] = v->shape[d];
        a->strides[d] = v->strides ? v->strides[d] : 0;
    }
    if (!v->strides && v->ndim > 0) { /* C-contiguous */
        int64_t s = (int64_t)v->itemsize;
        for (int d = v->ndim - 1; d >= 0; d--) {
            a->strides[d] = s;
            s *= a->shape[d];
        }
    }
    a->data = v->buf;
    a->readonly = v->readonly;
    a->device = -1;
    return count_elements(a);
}

/* ---- __cuda_array_interface__ ----------------------------------------------------------------- */
static int tuple_of_ints(PyObject *t, int64_t *out, int max, const char *what)
{
    if (!PyTuple_Check(t)) {
        PyErr_Format(PyExc_TypeError, "tally: __cuda_array_interface__['%s'] is not a tuple", what);
        return -1;
    }
    Py_ssize_t k = PyTuple_Size(t);
    if (k > max) {
        PyErr_Format(PyExc_ValueError, "tally: %zd dimensions (at most %d)", k, max);
        return -1;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        out[i] = PyLong_AsLongLong(PyTuple_GetItem(t, i));
        if (out[i] == -1 && PyErr_Occurred()) return -1;
    }
    return (int)k;
}

/* The CUDA device that owns ptr: asked of the producer when it can tell (obj.device.index for
 * PyTorch, obj.device.id for CuPy), else 0. */
static int device_of(PyObject *obj)
{
    PyObject *dev = PyObject_GetAttrString(obj, "device");
    if (!dev) {
        PyErr_Clear();
        return 0;
    }
    int ordinal = 0;
    const char *names[] = {"index", "id"};
    for (int i = 0; i < 2; i++) {
        PyObject *v = PyObject_GetAttrString(dev, names[i]);
        if (!v) {
            PyErr_Clear();
            continue;
        }
        if (PyLong_Check(v)) ordinal = (int)PyLong_AsLong(v);
        Py_DECREF(v);
        break;
    }
    if (PyLong_Check(dev)) ordinal = (int)PyLong_AsLong(dev);
    Py_DECREF(dev);
    if (PyErr_Occurred()) PyErr_Clear();
    return ordinal < 0 ? 0 : ordinal;
}

static int from_cai(PyObject *obj, PyObject *cai, tpy_array *a)
{
    if (!PyDict_Check(cai)) {
        PyErr_SetString(PyExc_TypeError, "tally: __cuda_array_interface__ is not a dict");
        return -1;
    }
    PyObject *typestr = PyDict_GetItemString(cai, "typestr");
    PyObject *shape = PyDict_GetItemString(cai, "shape");
    PyObject *data = PyDict_GetItemString(cai, "data");
    if (!typestr || !shape || !data || !PyUnicode_Check(typestr) || !PyTuple_Check(data)) {
        PyErr_SetString(PyExc_TypeError,
                        "tally: __cuda_array_interface__ lacks typestr, shape or data");
        return -1;
    }
    const char *ts = PyUnicode_AsUTF8AndSize(typestr, NULL);
    if (!ts) return -1;
    if (strlen(ts) < 3) {
        PyErr_Format(PyExc_TypeError, "tally: bad typestr '%s'", ts);
        return -1;
    }
    char what[64];
    snprintf(what, sizeof what, "'%s' (typestr)", ts);
    if (set_type(a, ts[1], (size_t)atoi(ts + 2), what) < 0) return -1;
    if ((ts[0] == '>' && HOST_IS_LITTLE && a->itemsize > 1)) {
        PyErr_SetString(PyExc_TypeError, "tally: big-endian GPU arrays are not supported");
        return -1;
    }
    int nd = tuple_of_ints(shape, a->shape, TPY_MAXDIM, "shape");
    if (nd < 0) return -1;
    a->ndim = nd;
    PyObject *strides = PyDict_GetItemString(cai, "strides");
    if (strides && strides != Py_None) {
        if (tuple_of_ints(strides, a->strides, TPY_MAXDIM, "strides") < 0) return -1;
    } else {
        int64_t s = (int64_t)a->itemsize;
        for (int d = nd - 1; d >= 0; d--) {
            a->strides[d] = s;
            s *= a->shape[d];
        }
    }
    PyObject *ptr = PyTuple_GetItem(data, 0);
    if (!ptr) return -1;
    a->data = (char *)PyLong_AsVoidPtr(ptr);
    if (PyErr_Occurred()) return -1;
    PyObject *ro = PyTuple_GetItem(data, 1);
    a->readonly = ro && PyObject_IsTrue(ro) == 1;
    PyObject *stream = PyDict_GetItemString(cai, "stream");
    a->stream = 0;
    if (stream && stream != Py_None) {
        a->stream = (intptr_t)PyLong_AsLongLong(stream);
        if (PyErr_Occurred()) return -1;
    }
    a->device = device_of(obj);
    a->keep = Py_NewRef(obj);
    return count_elements(a);
}

/* ---- DLPack ----------------------------------------------------------------------------------- */
static int from_dlpack(PyObject *obj, tpy_array *a)
{
    PyObject *devinfo = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
    if (!devinfo) return -1;
    long dtype_dev = -1;
    if (PyTuple_Check(devinfo) && PyTuple_Size(devinfo) == 2)
        dtype_dev = PyLong_AsLong(PyTuple_GetItem(devinfo, 0));
    Py_DECREF(devinfo);
    if (PyErr_Occurred()) return -1;
    PyObject *capsule;
    if (dtype_dev == DL_CUDA || dtype_dev == DL_CUDA_MANAGED) {
        /* stream 1: the legacy default stream, which tally's own (blocking) stream follows */
        PyObject *args = PyTuple_New(0);
        PyObject *kw = Py_BuildValue("{s:i}", "stream", 1);
        PyObject *m = PyObject_GetAttrString(obj, "__dlpack__");
        capsule = (args && kw && m) ? PyObject_Call(m, args, kw) : NULL;
        Py_XDECREF(args);
        Py_XDECREF(kw);
        Py_XDECREF(m);
    } else {
        capsule = PyObject_CallMethod(obj, "__dlpack__", NULL);
    }
    if (!capsule) return -1;
    tpy_dlmanaged *mt = PyCapsule_GetPointer(capsule, "dltensor");
    if (!mt) {
        Py_DECREF(capsule);
        return -1;
    }
    /* The capsule stays unconsumed: its own destructor frees the tensor when we drop it. */
    a->keep = capsule;
    tpy_dltensor *t = &mt->dl_tensor;
    char kind = t->dtype.code == 0 ? 'i' : t->dtype.code == 1 ? 'u' : t->dtype.code == 2 ? 'f'
              : t->dtype.code == 6 ? 'b' : '?';
    char what[64];
    snprintf(what, sizeof what, "DLPack code %d, %d bits, %d lanes", t->dtype.code,
             t->dtype.bits, t->dtype.lanes);
    if (t->dtype.lanes != 1) kind = '?';
    if (set_type(a, kind, (size_t)(t->dtype.bits / 8), what) < 0) return -1;
    if (t->ndim > TPY_MAXDIM || t->ndim < 0) {
        PyErr_Format(PyExc_ValueError, "tally: %d dimensions (at most %d)", t->ndim, TPY_MAXDIM);
        return -1;
    }
    a->ndim = t->ndim;
    int64_t s = (int64_t)a->itemsize;
    for (int d = t->ndim - 1; d >= 0; d--) {
        a->shape[d] = t->shape[d];
        a->strides[d] = t->strides ? t->strides[d] * (int64_t)a->itemsize : s;
        s *= t->shape[d];
    }
    a->data = (char *)t->data + t->byte_offset;
    a->readonly = 0;
    switch (t->device.device_type) {
    case DL_CPU: case DL_CUDA_HOST: a->device = -1; break;
    case DL_CUDA: case DL_CUDA_MANAGED: a->device = t->device.device_id; break;
    default:
        PyErr_Format(PyExc_TypeError,
                     "tally: DLPack device type %d is neither host memory nor CUDA",
                     t->device.device_type);
        return -1;
    }
    return count_elements(a);
}

int tpy_array_get(PyObject *obj, tpy_array *a, int writable)
{
    memset(a, 0, sizeof *a);
    a->device = -1;
    int rc;
    /* GPU arrays may also offer the buffer protocol only to refuse it (CuPy raises TypeError
     * unless the memory is host-accessible): their __cuda_array_interface__ is used then. */
    int use_buffer = PyObject_CheckBuffer(obj);
    if (use_buffer) {
        rc = from_buffer(obj, a, writable);
        if (rc < 0 && PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            if (PyObject_HasAttrString(obj, "__cuda_array_interface__")) {
                Py_XDECREF(type);
                Py_XDECREF(value);
                Py_XDECREF(tb);
                tpy_array_release(a);
                memset(a, 0, sizeof *a);
                a->device = -1;
                use_buffer = 0;
            } else {
                PyErr_Restore(type, value, tb);
            }
        }
    }
    if (use_buffer) {
        /* rc: the buffer protocol's answer */
    } else {
        PyObject *cai = PyObject_GetAttrString(obj, "__cuda_array_interface__");
        if (cai) {
            rc = from_cai(obj, cai, a);
            Py_DECREF(cai);
        } else if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return -1; /* e.g. PyTorch: a tensor that requires grad */
        } else {
            PyErr_Clear();
            if (PyObject_HasAttrString(obj, "__dlpack__")) {
                rc = from_dlpack(obj, a);
            } else {
                PyObject *tn = PyType_GetName(Py_TYPE(obj));
                if (tn) {
                    PyErr_Format(PyExc_TypeError,
                                 "tally: expected an array (buffer protocol, "
                                 "__cuda_array_interface__ or __dlpack__), got %S", tn);
                    Py_DECREF(tn);
                }
                return -1;
            }
        }
    }
    if (rc < 0) {
        tpy_array_release(a);
        return -1;
    }
    if (writable && a->readonly) {
        tpy_array_release(a);
        PyErr_SetString(PyExc_ValueError, "tally: the output array is read-only");
        return -1;
    }
    return 0;
}

void tpy_array_release(tpy_array *a)
{
    if (a->has_view) PyBuffer_Release(&a->view);
    a->has_view = 0;
    Py_CLEAR(a->keep);
}

int tpy_is_c_contiguous(const tpy_array *a)
{
    if (a->n <= 1) return 1;
    int64_t s = (int64_t)a->itemsize;
    for (int d = a->ndim - 1; d >= 0; d--) {
        if (a->shape[d] != 1 && a->strides[d] != s) return 0;
        s *= a->shape[d];
    }
    return 1;
}

/* ---- strided copies ---------------------------------------------------------------------------- */
static void swap_bytes(char *p, size_t k)
{
    for (size_t i = 0; i < k / 2; i++) {
        char c = p[i];
        p[i] = p[k - 1 - i];
        p[k - 1 - i] = c;
    }
}

/* One element of type t at src (already in host order) as a 64-bit integer of its signedness. */
static uint64_t widen(tally_type t, const char *src)
{
    switch (t) {
#define W(T, C)                                                                                    \
    case T: {                                                                                      \
        C v;                                                                                       \
        memcpy(&v, src, sizeof v);                                                                 \
        return (uint64_t)(int64_t)v;                                                               \
    }
        W(TALLY_I8, int8_t) W(TALLY_I16, int16_t) W(TALLY_I32, int32_t) W(TALLY_I64, int64_t)
#undef W
#define W(T, C)                                                                                    \
    case T: {                                                                                      \
        C v;                                                                                       \
        memcpy(&v, src, sizeof v);                                                                 \
        return (uint64_t)v;                                                                        \
    }
        W(TALLY_U8, uint8_t) W(TALLY_U16, uint16_t) W(TALLY_U32, uint32_t) W(TALLY_U64, uint64_t)
#undef W
    default: return 0;
    }
}

/* Copies the run of n elements at src (stride bytes apart) to dst, contiguous. */
static void copy_run(const tpy_array *a, const char *src, int64_t stride, uint64_t n,
                     tally_type dst_type, char *dst)
{
    const size_t k = a->itemsize;
    if (dst_type == a->type) {
        if (stride == (int64_t)k && !a->swap) {
            memcpy(dst, src, n * k);
            return;
        }
        for (uint64_t i = 0; i < n; i++, src += stride, dst += k) {
            memcpy(dst, src, k);
            if (a->swap) swap_bytes(dst, k);
        }
        return;
    }
    /* widening to i64 / u64 */
    for (uint64_t i = 0; i < n; i++, src += stride, dst += 8) {
        char tmp[8];
        memcpy(tmp, src, k);
        if (a->swap) swap_bytes(tmp, k);
        uint64_t v = widen(a->type, tmp);
        memcpy(dst, &v, 8);
    }
}

void tpy_gather(const tpy_array *a, const int *perm, tally_type dst_type, void *dstv)
{
    if (a->n == 0) return;
    char *dst = dstv;
    const size_t out_k = tally_type_size(dst_type);
    if (a->ndim == 0) {
        copy_run(a, a->data, (int64_t)a->itemsize, 1, dst_type, dst);
        return;
    }
    const int nd = a->ndim, inner = perm[nd - 1];
    const uint64_t len = (uint64_t)a->shape[inner];
    int64_t idx[TPY_MAXDIM] = {0};
    for (;;) {
        const char *src = a->data;
        for (int i = 0; i < nd - 1; i++) src += idx[i] * a->strides[perm[i]];
        copy_run(a, src, a->strides[inner], len, dst_type, dst);
        dst += len * out_k;
        int i = nd - 2;
        for (; i >= 0; i--) {
            if (++idx[i] < a->shape[perm[i]]) break;
            idx[i] = 0;
        }
        if (i < 0) return;
    }
}

void tpy_scatter(const void *srcv, const tpy_array *out, const int *perm)
{
    if (out->n == 0) return;
    const char *src = srcv;
    const size_t k = out->itemsize;
    if (out->ndim == 0) {
        memcpy(out->data, src, k);
        return;
    }
    const int nd = out->ndim, inner = perm[nd - 1];
    const uint64_t len = (uint64_t)out->shape[inner];
    const int64_t stride = out->strides[inner];
    int64_t idx[TPY_MAXDIM] = {0};
    for (;;) {
        char *dst = out->data;
        for (int i = 0; i < nd - 1; i++) dst += idx[i] * out->strides[perm[i]];
        if (stride == (int64_t)k) {
            memcpy(dst, src, len * k);
            src += len * k;
        } else {
            for (uint64_t j = 0; j < len; j++, dst += stride, src += k) memcpy(dst, src, k);
        }
        int i = nd - 2;
        for (; i >= 0; i--) {
            if (++idx[i] < out->shape[perm[i]]) break;
            idx[i] = 0;
        }
        if (i < 0) return;
    }
}

/* ---- new arrays --------------------------------------------------------------------------------- */
const char *tpy_numpy_dtype(tally_type t, int is_bool)
{
    static const char *names[TALLY_TYPE_COUNT] = {"i1", "u1", "i2", "u2", "i4",
                                                  "u4", "i8", "u8", "f4", "f8"};
    if (is_bool) return "?";
    return (int)t >= 0 && (int)t < TALLY_TYPE_COUNT ? names[t] : "u1";
}

static const char *struct_format(tally_type t, int is_bool)
{
    static const char *f[TALLY_TYPE_COUNT] = {"b", "B", "h", "H", "i", "I", "q", "Q", "f", "d"};
    return is_bool ? "?" : f[t];
}

static PyObject *numpy_module(void)
{
    static PyObject *np; /* imported once, on the first call that makes an array */
    static int tried;
    if (!tried) {
        tried = 1;
        np = PyImport_ImportModule("numpy");
        if (!np) PyErr_Clear();
    }
    return np;
}

PyObject *tpy_new_host_array(int ndim, const int64_t *shape, tally_type t, int is_bool,
                             tpy_array *out)
{
    PyObject *shp = PyTuple_New(ndim);
    if (!shp) return NULL;
    uint64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        PyTuple_SetItem(shp, d, PyLong_FromLongLong(shape[d]));
        n *= (uint64_t)shape[d];
    }
    PyObject *np = numpy_module(), *arr;
    if (np) {
        arr = PyObject_CallMethod(np, "empty", "Os", shp, tpy_numpy_dtype(t, is_bool));
    } else {
        PyObject *ba = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(n * tally_type_size(t)));
        PyObject *mv = ba ? PyMemoryView_FromObject(ba) : NULL;
        Py_XDECREF(ba);
        arr = mv ? PyObject_CallMethod(mv, "cast", "sO", struct_format(t, is_bool), shp) : NULL;
        Py_XDECREF(mv);
    }
    Py_DECREF(shp);
    if (!arr) return NULL;
    if (tpy_array_get(arr, out, 1) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

PyObject *tpy_new_device_array_like(PyObject *like, tpy_array *out)
{
    PyObject *modname = PyObject_GetAttrString((PyObject *)Py_TYPE(like), "__module__");
    if (!modname) return NULL;
    PyObject *top = NULL, *mod = NULL, *arr = NULL;
    PyObject *sep = PyUnicode_FromString(".");
    PyObject *parts = sep ? PyUnicode_Split(modname, sep, 1) : NULL;
    Py_XDECREF(sep);
    if (parts && PyList_Size(parts) > 0) top = PyList_GetItem(parts, 0);
    if (top) mod = PyImport_Import(top);
    if (mod) arr = PyObject_CallMethod(mod, "empty_like", "O", like);
    if (!arr && !PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "tally: cannot make an output array like the input");
    else if (!arr)
        PyErr_Format(PyExc_TypeError,
                     "tally: cannot make an output array like the input (%S.empty_like failed); "
                     "pass out=", modname);
    Py_XDECREF(parts);
    Py_XDECREF(mod);
    Py_DECREF(modname);
    if (!arr) return NULL;
    if (tpy_array_get(arr, out, 1) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}
