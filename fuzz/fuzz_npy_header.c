/* libFuzzer: .npy header parsing. Never reads past the buffer; what it accepts is consistent. */
#include <stdint.h>
#include <stdlib.h>

#include "tally_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tio_npy_info info;
    char err[256];
    tio_npy_status st = tio_npy_parse(data, size, &info, err, sizeof err);
    if (st != TIO_NPY_OK) return 0;
    if (info.data_offset > size) abort();
    if (info.elsize != 1 && info.elsize != 2 && info.elsize != 4 && info.elsize != 8) abort();
    if (info.ndim < 0 || info.ndim > TIO_NPY_MAX_DIMS) abort();
    uint64_t count = 1;
    for (int i = 0; i < info.ndim; i++) count *= info.shape[i];
    if (count != info.count) abort();
    return 0;
}
