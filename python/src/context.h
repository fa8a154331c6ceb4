/* tally.Context: a tally_context with a lock (a context takes one call at a time), and the
 * context a call runs on when none is given: the innermost `with ctx:` of the calling thread,
 * else the thread's own default (a CPU context on all cores for host arrays, a CUDA context per
 * device for GPU arrays), made on first use and kept in the thread's state. */
#ifndef TALLY_PY_CONTEXT_H
#define TALLY_PY_CONTEXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>
#include <stdlib.h>
#include "tally.h"
#include "array.h"

typedef struct {
    PyObject_HEAD
    tally_context *ctx;
    PyThread_type_lock lock;
    unsigned long generation; /* tpy_fork_generation when made: its threads exist */
} tpy_context;

/* Counts os.fork() children: a context made before the fork has no worker threads in the
 * child. Default contexts are then made anew (the old ones are abandoned, not destroyed: their
 * threads cannot be joined); explicit ones raise RuntimeError. */
extern unsigned long tpy_fork_generation;
void tpy_after_fork_in_child(void);

extern PyObject *tpy_context_type;

/* Makes the type; 0 or -1 (exception set). */
int tpy_context_init_type(PyObject *module);

/* The context a call on array a runs on: explicit (a tally.Context, or None), else the thread's
 * current or default one. Checks that it can read a (a GPU array needs a CUDA context of its
 * device). Returns a new reference, or NULL with an exception set. */
tpy_context *tpy_context_for(PyObject *explicit_ctx, const tpy_array *a, const char *fn);

/* Takes the context's lock, releasing the GIL while it waits if the lock is busy. Call with
 * the GIL held; tpy_context_unlock may be called without it. */
void tpy_context_lock(tpy_context *c);
void tpy_context_unlock(tpy_context *c);

/* Raises the Python exception for status st with the context's message ("tally.sum: ..."). */
PyObject *tpy_raise(tpy_context *c, tally_status st, const char *fn);
PyObject *tpy_raise_message(tally_status st, const char *fn, const char *message);

/* Points the CUDA context's work at stream (a producer's stream from __cuda_array_interface__)
 * for one call, and back (stream 0). No-op on other contexts or builds. */
void tpy_context_use_stream(tpy_context *c, intptr_t stream);

#endif
