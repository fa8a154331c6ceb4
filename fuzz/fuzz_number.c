/* libFuzzer: tio_parse_number. Whatever it accepts, strtod must read the same text to the same
 * double (integers: to the same value); the shortest formatting must read back. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tally_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    int64_t iv;
    double dv;
    tio_num_kind k = tio_parse_number((const char *)data, size, &iv, &dv);
    if (k == TIO_NUM_INVALID) return 0;
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    char *end;
    double ref = strtod(s, &end);
    /* the accepted grammar is a subset of strtod's (after leading blanks) */
    while (*end == ' ' || *end == '\t' || *end == '\r') end++;
    if (*end != '\0') abort();
    if (k == TIO_NUM_INT) {
        if ((double)iv != ref) abort();
    } else if (!(isnan(dv) && isnan(ref)) && memcmp(&dv, &ref, 8) != 0) {
        abort();
    }
    /* the exact-decimal form must round to the same double */
    int64_t m;
    int scale;
    double dv2;
    tio_num_kind k2 = tio_parse_number_scaled((const char *)data, size, &m, &scale, &dv2);
    if (k2 == TIO_NUM_INVALID) abort();
    double v2 = k2 == TIO_NUM_INT ? tio_decimal_to_double(m, scale) : dv2;
    if (!(isnan(v2) && isnan(ref)) && v2 != ref) abort();
    char buf[40];
    double v = k == TIO_NUM_INT ? (double)iv : dv;
    tio_format_double(v, buf);
    if (!isnan(v) && strtod(buf, NULL) != v) abort();
    free(s);
    return 0;
}
