/* tally.Context and the per-thread default contexts. */
#include "context.h"

#include <string.h>
#ifdef TALLY_PY_HAVE_CUDA
#include "tally_cuda.h"
#endif

PyObject *tpy_context_type;
unsigned long tpy_fork_generation;

void tpy_after_fork_in_child(void) { tpy_fork_generation++; }

/* ---- errors ------------------------------------------------------------------------------------ */
static PyObject *exception_for(tally_status st)
{
    switch (st) {
    case TALLY_ERR_OVERFLOW: return PyExc_OverflowError;
    case TALLY_ERR_OUT_OF_MEMORY: return PyExc_MemoryError;
    case TALLY_ERR_UNKNOWN_OP:
    case TALLY_ERR_UNKNOWN_TYPE:
    case TALLY_ERR_UNSUPPORTED: return PyExc_TypeError;
    case TALLY_ERR_BACKEND_UNAVAILABLE:
    case TALLY_ERR_BACKEND_FAILURE: return PyExc_RuntimeError;
    default: return PyExc_ValueError; /* INVALID_ARGUMENT, OVERLAP, EMPTY, DOMAIN */
    }
}

PyObject *tpy_raise_message(tally_status st, const char *fn, const char *message)
{
    PyErr_Format(exception_for(st), "%s: %s", fn,
                 message && *message ? message : tally_status_string(st));
    return NULL;
}

PyObject *tpy_raise(tpy_context *c, tally_status st, const char *fn)
{
    return tpy_raise_message(st, fn, c ? tally_last_error(c->ctx) : NULL);
}

/* ---- locking ----------------------------------------------------------------------------------- */
void tpy_context_lock(tpy_context *c)
{
    if (PyThread_acquire_lock(c->lock, NOWAIT_LOCK)) return;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(c->lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
}

void tpy_context_unlock(tpy_context *c) { PyThread_release_lock(c->lock); }

void tpy_context_use_stream(tpy_context *c, intptr_t stream)
{
#ifdef TALLY_PY_HAVE_CUDA
    /* 1 is the legacy default stream, which the context's own (blocking) stream already
     * follows; anything else (2: per-thread default, or a stream) is waited for by running
     * on it */
    if (stream == 1 || tally_active_backend(c->ctx) != TALLY_BACKEND_CUDA) return;
    tally_cuda_set_stream(c->ctx, (void *)stream);
#else
    (void)c;
    (void)stream;
#endif
}

/* ---- the type ---------------------------------------------------------------------------------- */
static const char *backend_names[] = {"auto", "cpu", "cuda", "vulkan"};
static const char *isa_names[] = {"auto", "scalar", "avx2", "avx512"};

static int name_index(PyObject *v, const char **names, int count, const char *what, int *out)
{
    if (v == NULL || v == Py_None) return 0;
    if (PyUnicode_Check(v)) {
        for (int i = 0; i < count; i++)
            if (PyUnicode_CompareWithASCIIString(v, names[i]) == 0) {
                *out = i;
                return 0;
            }
    }
    PyErr_Format(PyExc_ValueError, "tally.Context: %s = %R is not one of %s", what, v,
                 count == 4 && names == backend_names ? "'auto', 'cpu', 'cuda', 'vulkan'"
                                                      : "'auto', 'scalar', 'avx2', 'avx512'");
    return -1;
}

static tpy_context *context_new(tally_options *o)
{
    PyTypeObject *tp = (PyTypeObject *)tpy_context_type;
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    tpy_context *c = (tpy_context *)alloc(tp, 0);
    if (!c) return NULL;
    c->generation = tpy_fork_generation;
    c->lock = PyThread_allocate_lock();
    if (!c->lock) {
        Py_DECREF(c);
        return (tpy_context *)PyErr_NoMemory();
    }
    tally_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tally_create(&c->ctx, o);
    Py_END_ALLOW_THREADS
    if (st != TALLY_OK) {
        tpy_raise_message(st, "tally.Context", tally_create_error());
        Py_DECREF(c);
        return NULL;
    }
    return c;
}

static PyObject *context_tp_new(PyTypeObject *tp, PyObject *args, PyObject *kw)
{
    (void)tp;
    static char *kwlist[] = {"backend", "threads", "device", "isa", NULL};
    PyObject *backend = NULL, *isa = NULL;
    int threads = 0, device = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$iiO:Context", kwlist, &backend, &threads,
                                     &device, &isa))
        return NULL;
    tally_options o;
    tally_options_init(&o);
    int b = 0, i = 0;
    if (name_index(backend, backend_names, 4, "backend", &b) < 0 ||
        name_index(isa, isa_names, 4, "isa", &i) < 0)
        return NULL;
    o.backend = (tally_backend_kind)b;
    o.isa = (tally_isa)i;
    o.threads = threads;
    o.device = device;
    return (PyObject *)context_new(&o);
}

static void context_dealloc(PyObject *self)
{
    tpy_context *c = (tpy_context *)self;
    PyTypeObject *tp = Py_TYPE(self);
    tally_destroy(c->ctx);
    if (c->lock) PyThread_free_lock(c->lock);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyObject *get_backend(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(tally_backend_name(tally_active_backend(((tpy_context *)self)->ctx)));
}
static PyObject *get_threads(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(tally_thread_count(((tpy_context *)self)->ctx));
}
static PyObject *get_isa(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(tally_isa_name(tally_active_isa(((tpy_context *)self)->ctx)));
}
static PyObject *get_device(PyObject *self, void *closure)
{
    (void)closure;
#ifdef TALLY_PY_HAVE_CUDA
    int d = tally_cuda_device(((tpy_context *)self)->ctx);
    if (d >= 0) return PyLong_FromLong(d);
#else
    (void)self;
#endif
    Py_RETURN_NONE;
}
static PyObject *get_description(PyObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(tally_device_description(((tpy_context *)self)->ctx));
}

static PyObject *context_repr(PyObject *self)
{
    tally_context *ctx = ((tpy_context *)self)->ctx;
    tally_backend_kind k = tally_active_backend(ctx);
    if (k == TALLY_BACKEND_CPU)
        return PyUnicode_FromFormat("tally.Context(backend='cpu', threads=%d, isa='%s')",
                                    tally_thread_count(ctx), tally_isa_name(tally_active_isa(ctx)));
    return PyUnicode_FromFormat("tally.Context(backend='%s', device='%s')", tally_backend_name(k),
                                tally_device_description(ctx));
}

/* The thread's stack of contexts entered with `with`. */
static PyObject *thread_stack(int create)
{
    PyObject *d = PyThreadState_GetDict();
    if (!d) return NULL;
    PyObject *s = PyDict_GetItemString(d, "tally.context_stack");
    if (s || !create) return s;
    s = PyList_New(0);
    if (!s) return NULL;
    int rc = PyDict_SetItemString(d, "tally.context_stack", s);
    Py_DECREF(s);
    return rc < 0 ? NULL : s;
}

static PyObject *context_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *s = thread_stack(1);
    if (!s || PyList_Append(s, self) < 0) return NULL;
    return Py_NewRef(self);
}

static PyObject *context_exit(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    PyObject *s = thread_stack(0);
    Py_ssize_t k = s ? PyList_Size(s) : 0;
    if (k > 0 && PySequence_DelItem(s, k - 1) < 0) return NULL;
    Py_RETURN_FALSE;
}

static PyGetSetDef context_getset[] = {
    {"backend", get_backend, NULL, "The backend this context runs on: 'cpu', 'cuda', ...", NULL},
    {"threads", get_threads, NULL, "CPU threads it uses (the caller included).", NULL},
    {"isa", get_isa, NULL, "The CPU SIMD path: 'scalar', 'avx2' or 'avx512'.", NULL},
    {"device", get_device, NULL, "The CUDA device ordinal, or None.", NULL},
    {"description", get_description, NULL, "The device ('NVIDIA H200, 132 SMs, 139 GiB'), or ''.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef context_methods[] = {
    {"__enter__", context_enter, METH_NOARGS,
     "Makes this the calling thread's context for calls that name none, until __exit__."},
    {"__exit__", context_exit, METH_VARARGS, "Ends the `with` block begun by __enter__."},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(context_doc,
"Context(backend='auto', *, threads=0, device=0, isa=None)\n"
"--\n\n"
"A tally context: the backend, its threads or GPU, and their scratch memory.\n\n"
"backend: 'cpu', 'cuda', 'vulkan' or 'auto' (a usable GPU, else the CPU).\n"
"threads: CPU threads, the caller included; 0 means every core.\n"
"device: the GPU ordinal for GPU backends.\n"
"isa: 'scalar', 'avx2' or 'avx512' to force a CPU SIMD path (default: the best, or the\n"
"TALLY_ISA environment variable).\n\n"
"Pass it as ctx= to any function, or make it the current one for a thread with\n"
"`with tally.Context(threads=1): ...`. Without either, a call runs on the calling thread's\n"
"default context: a CPU context on every core for host arrays, a CUDA context per device for\n"
"GPU arrays. A context runs one call at a time (calls from several threads take turns);\n"
"results never depend on the context: the bits are the same on every backend and thread count\n"
"(float products and float scans aside, which are deterministic per backend).\n\n"
"Raises RuntimeError with tally's message when the backend cannot start here (not built,\n"
"no GPU).");

int tpy_context_init_type(PyObject *module)
{
    PyType_Slot slots[] = {
        {Py_tp_new, context_tp_new},
        {Py_tp_dealloc, context_dealloc},
        {Py_tp_repr, context_repr},
        {Py_tp_getset, context_getset},
        {Py_tp_methods, context_methods},
        {Py_tp_doc, (void *)context_doc},
        {0, NULL},
    };
    PyType_Spec spec = {"tally.Context", sizeof(tpy_context), 0, Py_TPFLAGS_DEFAULT, slots};
    tpy_context_type = PyType_FromSpec(&spec);
    if (!tpy_context_type) return -1;
    Py_INCREF(tpy_context_type);
    return PyModule_AddObject(module, "Context", tpy_context_type);
}

/* ---- which context a call runs on ------------------------------------------------------------ */
static tpy_context *thread_default(int device)
{
    PyObject *d = PyThreadState_GetDict();
    if (!d) {
        PyErr_SetString(PyExc_RuntimeError, "tally: no thread state");
        return NULL;
    }
    char key[48];
    if (device < 0) snprintf(key, sizeof key, "tally.context.cpu");
    else snprintf(key, sizeof key, "tally.context.cuda.%d", device);
    PyObject *c = PyDict_GetItemString(d, key);
    if (c && ((tpy_context *)c)->generation == tpy_fork_generation) return (tpy_context *)Py_NewRef(c);
    if (c) { /* made before os.fork(): abandoned (its threads are not in this process) */
        ((tpy_context *)c)->ctx = NULL;
        if (PyDict_DelItemString(d, key) < 0) return NULL;
    }
    tally_options o;
    tally_options_init(&o);
    o.backend = device < 0 ? TALLY_BACKEND_CPU : TALLY_BACKEND_CUDA;
    o.device = device < 0 ? 0 : device;
    tpy_context *made = context_new(&o);
    if (!made) return NULL;
    if (PyDict_SetItemString(d, key, (PyObject *)made) < 0) {
        Py_DECREF(made);
        return NULL;
    }
    return made;
}

tpy_context *tpy_context_for(PyObject *explicit_ctx, const tpy_array *a, const char *fn)
{
    tpy_context *c;
    if (explicit_ctx && explicit_ctx != Py_None) {
        if (!PyObject_TypeCheck(explicit_ctx, (PyTypeObject *)tpy_context_type)) {
            PyErr_Format(PyExc_TypeError, "%s: ctx must be a tally.Context, not %R", fn,
                         explicit_ctx);
            return NULL;
        }
        c = (tpy_context *)Py_NewRef(explicit_ctx);
    } else {
        PyObject *s = thread_stack(0);
        Py_ssize_t k = s ? PyList_Size(s) : 0;
        if (k > 0) c = (tpy_context *)Py_NewRef(PyList_GetItem(s, k - 1));
        else return thread_default(a->device);
    }
    if (c->generation != tpy_fork_generation || !c->ctx) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s: this tally.Context was made before os.fork(): its threads are not in "
                     "this process; make a new one here", fn);
        Py_DECREF(c);
        return NULL;
    }
    if (a->device >= 0) {
        tally_backend_kind kind = tally_active_backend(c->ctx);
        int dev = -1;
#ifdef TALLY_PY_HAVE_CUDA
        dev = tally_cuda_device(c->ctx);
#endif
        if (kind != TALLY_BACKEND_CUDA || dev != a->device) {
            PyErr_Format(PyExc_ValueError,
                         "%s: the array is on CUDA device %d but the context runs on %s%s",
                         fn, a->device, tally_backend_name(kind),
                         kind == TALLY_BACKEND_CUDA ? " (another device)" : "");
            Py_DECREF(c);
            return NULL;
        }
    }
    return c;
}
