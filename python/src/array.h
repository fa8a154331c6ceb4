/* The extension's view of an array: where its elements are (host memory or a CUDA device), their
 * tally type, shape and strides in bytes, and what keeps the memory alive. Arrays come from the
 * buffer protocol (NumPy, array.array, memoryview, mmap), __cuda_array_interface__ (CuPy,
 * PyTorch, Numba) or DLPack (__dlpack__: PyTorch CPU tensors, JAX, ...). */
#ifndef TALLY_PY_ARRAY_H
#define TALLY_PY_ARRAY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include "tally.h"

#define TPY_MAXDIM 64

typedef struct tpy_array {
    tally_type type;
    int is_bool;                  /* NumPy bool: one byte, 0 or 1, reduced as u8 */
    int swap;                     /* host data in the other byte order: copied with a swap */
    int ndim;
    int64_t shape[TPY_MAXDIM];
    int64_t strides[TPY_MAXDIM];  /* bytes; may be negative or 0 */
    char *data;                   /* the first element (index 0 in every dimension) */
    size_t itemsize;
    uint64_t n;                   /* elements in all */
    int device;                   /* -1: host memory; >= 0: the CUDA device ordinal */
    intptr_t stream;              /* __cuda_array_interface__ v3: the producer's stream (0: none) */
    int readonly;
    Py_buffer view;               /* the buffer-protocol view, when has_view */
    int has_view;
    PyObject *keep;               /* a DLPack capsule or the producer: kept until release */
} tpy_array;

/* Fills a from obj. writable: the caller will write into it (an out= array). Returns 0, or -1
 * with a Python exception set (TypeError for an object that is no array, or an element type
 * tally does not handle). On success tpy_array_release must be called. */
int tpy_array_get(PyObject *obj, tpy_array *a, int writable);
void tpy_array_release(tpy_array *a);

/* 1 if the elements lie in C order with no gaps (any array of 0 or 1 element does). */
int tpy_is_c_contiguous(const tpy_array *a);

/* Copies every element of a (host memory) into dst, contiguous, visiting the dimensions in the
 * order perm[0] (outermost) .. perm[ndim-1] (innermost), swapping bytes if a->swap, and
 * converting each value to dst_type (a's own type, or the 64-bit integer of its signedness:
 * i64 / u64). Needs no GIL. */
void tpy_gather(const tpy_array *a, const int *perm, tally_type dst_type, void *dst);
/* The reverse of tpy_gather without conversion: src holds out's elements contiguous in the
 * order perm gives; they are written into out (host memory) at its strides. Needs no GIL. */
void tpy_scatter(const void *src, const tpy_array *out, const int *perm);

/* NumPy's name for tally type t ("f4", "i8", "?" for bool). */
const char *tpy_numpy_dtype(tally_type t, int is_bool);

/* A new host array of the given shape and type, C-contiguous and writable: a NumPy array when
 * NumPy can be imported, else a memoryview over a bytearray. *out views it (release it with
 * tpy_array_release). Returns a new reference, or NULL with an exception set. */
PyObject *tpy_new_host_array(int ndim, const int64_t *shape, tally_type t, int is_bool,
                             tpy_array *out);
/* A new device array like like (same library, device and shape; dtype of like), through the
 * producing library's empty_like (torch.empty_like, cupy.empty_like). */
PyObject *tpy_new_device_array_like(PyObject *like, tpy_array *out);

#endif
