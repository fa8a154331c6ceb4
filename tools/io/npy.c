/* .npy headers: "\x93NUMPY", version major.minor, header length (u16 for 1.x, u32 for 2.x/3.x,
 * little-endian), then a Python dict literal {'descr': '<f8', 'fortran_order': False,
 * 'shape': (3,), } padded with spaces and ended by '\n'. We parse only that literal grammar. */
#include "tally_io.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* tally_io does not link libtally: its own copy of the element sizes. */
static size_t tio_type_size(tally_type t)
{
    static const size_t sizes[TALLY_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    return (unsigned)t < TALLY_TYPE_COUNT ? sizes[t] : 0;
}

static const unsigned char tio_npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

int tio_npy_is_npy(const void *buf, size_t len)
{
    return len >= 6 && memcmp(buf, tio_npy_magic, 6) == 0;
}

static void tio_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int tio_parse_dtype(const char *s, tally_type *type, int *swap, int *is_bool)
{
    static const struct { const char *name; tally_type t; int b; } words[] = {
        {"i16", TALLY_I16, 0},
        {"u16", TALLY_U16, 0},     {"i32", TALLY_I32, 0},     {"u32", TALLY_U32, 0},
        {"i64", TALLY_I64, 0},     {"u64", TALLY_U64, 0},     {"f32", TALLY_F32, 0},
        {"f64", TALLY_F64, 0},     {"int8", TALLY_I8, 0},     {"uint8", TALLY_U8, 0},
        {"int16", TALLY_I16, 0},   {"uint16", TALLY_U16, 0},  {"int32", TALLY_I32, 0},
        {"uint32", TALLY_U32, 0},  {"int64", TALLY_I64, 0},   {"uint64", TALLY_U64, 0},
        {"float32", TALLY_F32, 0}, {"float64", TALLY_F64, 0}, {"float", TALLY_F32, 0},
        {"double", TALLY_F64, 0},  {"bool", TALLY_U8, 1},
    };
    *swap = 0;
    *is_bool = 0;
    char order = 0;
    if (*s == '<' || *s == '>' || *s == '|' || *s == '=') order = *s++;
    /* tally's i8 is int8, numpy's is int64: without a byte order, refuse to guess */
    if (!order && (strcmp(s, "i8") == 0 || strcmp(s, "u8") == 0)) return TIO_DTYPE_AMBIGUOUS;
    /* numpy's kind + byte count: i4, u1, f8, b1 */
    if ((s[0] == 'i' || s[0] == 'u' || s[0] == 'f' || s[0] == 'b') && s[1] >= '1' &&
        s[1] <= '8' && s[2] == '\0') {
        int bytes = s[1] - '0';
        int ok = 1;
        switch (s[0]) {
        case 'i': *type = bytes == 1 ? TALLY_I8 : bytes == 2 ? TALLY_I16 : bytes == 4 ? TALLY_I32
                          : bytes == 8 ? TALLY_I64 : (ok = 0, TALLY_I8); break;
        case 'u': *type = bytes == 1 ? TALLY_U8 : bytes == 2 ? TALLY_U16 : bytes == 4 ? TALLY_U32
                          : bytes == 8 ? TALLY_U64 : (ok = 0, TALLY_U8); break;
        case 'f': *type = bytes == 4 ? TALLY_F32 : bytes == 8 ? TALLY_F64 : (ok = 0, TALLY_F32);
                  break;
        default: *type = TALLY_U8; *is_bool = 1; ok = bytes == 1; break;
        }
        if (!ok) return -1;
    } else {
        size_t i;
        for (i = 0; i < sizeof words / sizeof words[0]; i++)
            if (strcmp(s, words[i].name) == 0) break;
        if (i == sizeof words / sizeof words[0]) return -1;
        *type = words[i].t;
        *is_bool = words[i].b;
    }
    if (order == '>' && tio_type_size(*type) > 1) *swap = 1;
    return 0;
}

/* ---- a tiny reader for the dict literal ---- */
typedef struct tio_lex {
    const char *p, *end;
} tio_lex;

static void tio_skip_ws(tio_lex *lx)
{
    while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n' ||
                               *lx->p == '\r'))
        lx->p++;
}

static int tio_accept(tio_lex *lx, char c)
{
    tio_skip_ws(lx);
    if (lx->p < lx->end && *lx->p == c) {
        lx->p++;
        return 1;
    }
    return 0;
}

/* A quoted string without escapes, into out (truncated to outlen - 1). */
static int tio_read_string(tio_lex *lx, char *out, size_t outlen)
{
    tio_skip_ws(lx);
    if (lx->p >= lx->end || (*lx->p != '\'' && *lx->p != '"')) return -1;
    char q = *lx->p++;
    size_t n = 0;
    while (lx->p < lx->end && *lx->p != q) {
        if (*lx->p == '\\') return -1;
        if (n + 1 < outlen) out[n++] = *lx->p;
        else return -1;
        lx->p++;
    }
    if (lx->p >= lx->end) return -1;
    lx->p++;
    out[n] = '\0';
    return 0;
}

tio_npy_status tio_npy_parse(const void *buf, size_t len, tio_npy_info *info, char *err,
                             size_t errlen)
{
    const unsigned char *b = buf;
    memset(info, 0, sizeof *info);
    if (len < 6 || memcmp(b, tio_npy_magic, 6) != 0) {
        if (len < 6 && memcmp(b, tio_npy_magic, len) == 0) {
            tio_errf(err, errlen, "truncated .npy header (%zu bytes)", len);
            return TIO_NPY_TRUNCATED;
        }
        tio_errf(err, errlen, "not a .npy file (no magic)");
        return TIO_NPY_NOT_NPY;
    }
    if (len < 10) {
        tio_errf(err, errlen, "truncated .npy header (%zu bytes)", len);
        return TIO_NPY_TRUNCATED;
    }
    info->major = b[6];
    info->minor = b[7];
    size_t hlen, pre;
    if (info->major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        pre = 10;
    } else if (info->major == 2 || info->major == 3) {
        if (len < 12) {
            tio_errf(err, errlen, "truncated .npy header (%zu bytes)", len);
            return TIO_NPY_TRUNCATED;
        }
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        pre = 12;
    } else {
        tio_errf(err, errlen, "unsupported .npy version %d.%d", info->major, info->minor);
        return TIO_NPY_MALFORMED;
    }
    if (hlen > len - pre) {
        tio_errf(err, errlen, "truncated .npy header (needs %zu bytes, has %zu)", pre + hlen, len);
        return TIO_NPY_TRUNCATED;
    }
    info->data_offset = pre + hlen;
    tio_lex lx = {(const char *)b + pre, (const char *)b + pre + hlen};
    int have_descr = 0, have_order = 0, have_shape = 0;
    char descr_buf[64];
    if (!tio_accept(&lx, '{')) goto malformed;
    for (;;) {
        if (tio_accept(&lx, '}')) break;
        char key[32];
        if (tio_read_string(&lx, key, sizeof key) != 0) goto malformed;
        if (!tio_accept(&lx, ':')) goto malformed;
        if (strcmp(key, "descr") == 0) {
            tio_skip_ws(&lx);
            if (lx.p < lx.end && *lx.p == '[') {
                tio_errf(err, errlen, "unsupported dtype: a structured array");
                return TIO_NPY_UNSUPPORTED;
            }
            if (tio_read_string(&lx, descr_buf, sizeof descr_buf) != 0) goto malformed;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            tio_skip_ws(&lx);
            if ((size_t)(lx.end - lx.p) >= 4 && memcmp(lx.p, "True", 4) == 0) {
                info->fortran_order = 1;
                lx.p += 4;
            } else if ((size_t)(lx.end - lx.p) >= 5 && memcmp(lx.p, "False", 5) == 0) {
                info->fortran_order = 0;
                lx.p += 5;
            } else
                goto malformed;
            have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (!tio_accept(&lx, '(')) goto malformed;
            info->ndim = 0;
            info->count = 1;
            for (;;) {
                if (tio_accept(&lx, ')')) break;
                tio_skip_ws(&lx);
                if (lx.p >= lx.end || (unsigned)(*lx.p - '0') >= 10) goto malformed;
                uint64_t d = 0;
                while (lx.p < lx.end && (unsigned)(*lx.p - '0') < 10) {
                    if (d > (UINT64_MAX - 9) / 10) goto malformed;
                    d = d * 10 + (uint64_t)(*lx.p - '0');
                    lx.p++;
                }
                if (info->ndim >= TIO_NPY_MAX_DIMS) goto malformed;
                info->shape[info->ndim++] = d;
                if (d && info->count > UINT64_MAX / d) {
                    tio_errf(err, errlen, "malformed .npy header: shape too large");
                    return TIO_NPY_MALFORMED;
                }
                info->count *= d;
                if (tio_accept(&lx, ',')) continue;
                if (tio_accept(&lx, ')')) break;
                goto malformed;
            }
            have_shape = 1;
        } else {
            goto malformed;
        }
        if (tio_accept(&lx, ',')) continue;
        if (tio_accept(&lx, '}')) break;
        goto malformed;
    }
    if (!have_descr || !have_order || !have_shape) goto malformed;
    if (strlen(descr_buf) >= sizeof info->descr) {
        tio_errf(err, errlen, "unsupported dtype '%.40s'", descr_buf);
        return TIO_NPY_UNSUPPORTED;
    }
    strcpy(info->descr, descr_buf);
    /* only numpy's typestr form here ('<f8'), not the word aliases */
    if (!(descr_buf[0] == '<' || descr_buf[0] == '>' || descr_buf[0] == '|' ||
          descr_buf[0] == '=') ||
        tio_parse_dtype(descr_buf, &info->type, &info->swap, &info->is_bool) != 0) {
        tio_errf(err, errlen, "unsupported dtype '%s'", info->descr);
        return TIO_NPY_UNSUPPORTED;
    }
    info->elsize = tio_type_size(info->type);
    if (info->count > UINT64_MAX / info->elsize) {
        tio_errf(err, errlen, "malformed .npy header: shape too large");
        return TIO_NPY_MALFORMED;
    }
    return TIO_NPY_OK;
malformed:
    tio_errf(err, errlen, "malformed .npy header near offset %zu",
             (size_t)(lx.p - (const char *)b));
    return TIO_NPY_MALFORMED;
}

size_t tio_npy_write_header(char *buf, size_t buflen, tally_type type, uint64_t n)
{
    static const char *descr[TALLY_TYPE_COUNT] = {"|i1", "|u1", "<i2", "<u2", "<i4",
                                                  "<u4", "<i8", "<u8", "<f4", "<f8"};
    char dict[96];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%llu,), }",
                      descr[type], (unsigned long long)n);
    size_t total = 10 + (size_t)dl + 1;
    total = (total + 63) / 64 * 64;
    if (total > buflen) return 0;
    memcpy(buf, tio_npy_magic, 6);
    buf[6] = 1;
    buf[7] = 0;
    size_t hlen = total - 10;
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)dl);
    memset(buf + 10 + dl, ' ', total - 10 - (size_t)dl - 1);
    buf[total - 1] = '\n';
    return total;
}
