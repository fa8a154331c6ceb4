/* Partials: init, merge in index order, and the final results (see partial.h). */
#include <math.h>
#include <string.h>
#include "core/partial.h"
#include "core/types.h"

uint32_t tally_ops_need(tally_type type, const tally_op *ops, size_t nops, int omit_nan)
{
    /* The ops' needs (types.h), refined for what a partial holds: float data counts its NaNs
     * for min and max (a NaN propagates), for a count with omit_nan, and for a mean (whose
     * count leaves them out with omit_nan); argmin and argmax keep the first NaN's index when
     * NaN propagates. */
    const uint32_t needs = tally_ops_needs(ops, nops);
    const int fl = tally_type_is_float(type);
    const uint32_t nan = fl ? TALLY_NEED_NANS : 0;
    uint32_t need = 0;
    if (needs & TALLY_FEAT_SUM) need |= TALLY_NEED_SUM;
    if (needs & TALLY_FEAT_PROD) need |= TALLY_NEED_PROD;
    if (needs & TALLY_FEAT_MIN) need |= TALLY_NEED_MIN | nan;
    if (needs & TALLY_FEAT_MAX) need |= TALLY_NEED_MAX | nan;
    if (needs & TALLY_FEAT_ARGMIN) need |= TALLY_NEED_ARGMIN;
    if (needs & TALLY_FEAT_ARGMAX) need |= TALLY_NEED_ARGMAX;
    if ((needs & (TALLY_FEAT_ARGMIN | TALLY_FEAT_ARGMAX)) && fl && !omit_nan)
        need |= TALLY_NEED_FIRSTNAN;
    if (needs & TALLY_FEAT_BITS) need |= TALLY_NEED_BITS;
    if ((needs & TALLY_FEAT_COUNT) && omit_nan) need |= nan;
    if (needs & TALLY_FEAT_MEAN) need |= nan;
    return need;
}

void tally_partial_init(tally_partial *p, tally_type type, uint32_t need, int omit_nan)
{
    /* Only what need asks for: this runs on every call, small ones included. */
    p->need = need;
    p->omit_nan = omit_nan;
    p->type = type;
    p->n = 0;
    p->nans = 0;
    p->isum = 0;
    p->usum = 0;
    p->kmin = UINT64_MAX;
    p->kmax = 0;
    p->imin = p->imax = TALLY_NO_INDEX;
    p->first_nan = TALLY_NO_INDEX;
    p->band = ~(uint64_t)0;
    p->bor = p->bxor = 0;
    p->iprod = 1;
    p->uprod = 1;
    p->prod_zero = p->prod_ovf = 0;
    p->fprod = 1.0;
    p->lane_pos = 0;
    if (need & TALLY_NEED_PROD)
        for (int i = 0; i < TALLY_PROD_LANES; i++) p->lanes[i] = 1.0;
    if (tally_type_is_float(type) && (need & TALLY_NEED_SUM)) tally_exact_init(&p->fsum);
    if (need & TALLY_NEED_SQ) tally_exact_init(&p->fsq);
}

static const __int128 iprod_cap = (__int128)1 << 63;

/* The integer product with the overflow cap of partial.h: |iprod| <= 2^63, uprod < 2^64. */
static void mul_signed(tally_partial *d, __int128 v)
{
    __int128 r = d->iprod * v; /* both |.| <= 2^63: fits */
    if (r > iprod_cap || r < -iprod_cap) d->prod_ovf = 1; else d->iprod = r;
}

void tally_partial_merge(tally_partial *dst, const tally_partial *src)
{
    uint32_t need = dst->need;
    int dval = dst->n > dst->nans, sval = src->n > src->nans;
    if (need & TALLY_NEED_SUM) {
        if (tally_type_is_float(dst->type)) tally_exact_merge(&dst->fsum, &src->fsum);
        else if (tally_type_is_signed_int(dst->type)) dst->isum += src->isum;
        else dst->usum += src->usum;
    }
    if (need & TALLY_NEED_SQ) tally_exact_merge(&dst->fsq, &src->fsq);
    if ((need & TALLY_NEED_PROD) && !tally_type_is_float(dst->type)) {
        dst->prod_zero |= src->prod_zero;
        dst->prod_ovf |= src->prod_ovf;
        if (!dst->prod_ovf) {
            if (tally_type_is_signed_int(dst->type)) mul_signed(dst, src->iprod);
            else {
                unsigned __int128 r = dst->uprod * src->uprod; /* both < 2^64: fits */
                if (r > UINT64_MAX) dst->prod_ovf = 1; else dst->uprod = r;
            }
        }
    }
    if ((need & (TALLY_NEED_MIN | TALLY_NEED_ARGMIN)) && sval && (!dval || src->kmin < dst->kmin)) {
        dst->kmin = src->kmin;
        dst->imin = src->imin;
    }
    if ((need & (TALLY_NEED_MAX | TALLY_NEED_ARGMAX)) && sval && (!dval || src->kmax > dst->kmax)) {
        dst->kmax = src->kmax;
        dst->imax = src->imax;
    }
    if (dst->first_nan == TALLY_NO_INDEX) dst->first_nan = src->first_nan;
    dst->band &= src->band;
    dst->bor |= src->bor;
    dst->bxor ^= src->bxor;
    dst->n += src->n;
    dst->nans += src->nans;
}

double tally_prod_lanes(const double *l)
{
    double p = l[0];
    for (int i = 1; i < TALLY_PROD_LANES; i++) p *= l[i];
    return p;
}

void tally_partial_prod_feed(tally_partial *p, const void *data, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        double v = p->type == TALLY_F32 ? (double)((const float *)data)[i]
                                        : ((const double *)data)[i];
        if (p->omit_nan && v != v) v = 1.0;
        p->lanes[p->lane_pos % TALLY_PROD_LANES] *= v;
        if (++p->lane_pos == TALLY_PROD_BLOCK) {
            p->fprod *= tally_prod_lanes(p->lanes);
            for (int j = 0; j < TALLY_PROD_LANES; j++) p->lanes[j] = 1.0;
            p->lane_pos = 0;
        }
    }
}

/* The 64-bit and/or/xor words folded to the element width, then widened like the type. */
static void bits_result(const tally_partial *p, tally_op op, tally_result *r)
{
    uint64_t w = op == TALLY_AND ? p->band : op == TALLY_OR ? p->bor : p->bxor;
    unsigned bits = 64;
    unsigned width = (unsigned)tally_type_size(p->type) * 8;
    while (bits > width) {
        bits /= 2;
        uint64_t hi = w >> bits, lo = w & ((1ull << bits) - 1);
        w = op == TALLY_AND ? (hi & lo) : op == TALLY_OR ? (hi | lo) : (hi ^ lo);
    }
    if (tally_type_is_signed_int(p->type)) {
        if (width < 64 && (w >> (width - 1)) & 1) w |= ~((1ull << width) - 1);
        r->type = TALLY_I64;
        r->value.i64 = (int64_t)w;
    } else {
        r->type = TALLY_U64;
        r->value.u64 = w;
    }
}

static void extreme_value(const tally_partial *p, uint64_t key, tally_result *r)
{
    if (tally_type_is_float(p->type)) {
        r->type = TALLY_F64;
        r->value.f64 = tally_key_to_f64(key);
    } else if (tally_type_is_signed_int(p->type)) {
        r->type = TALLY_I64;
        r->value.i64 = tally_key_to_i64(key);
    } else {
        r->type = TALLY_U64;
        r->value.u64 = key;
    }
}

/* Elements that count for mean/var/count (NaNs left out with omit_nan). */
static uint64_t counted(const tally_partial *p)
{
    return p->omit_nan ? p->n - p->nans : p->n;
}

static double sum_as_double(const tally_partial *p)
{
    if (tally_type_is_float(p->type)) return tally_exact_round(&p->fsum);
    if (tally_type_is_signed_int(p->type)) return (double)p->isum; /* correctly rounded */
    return (double)p->usum;
}

double tally_partial_mean(const tally_partial *p, tally_status *status)
{
    uint64_t c = counted(p);
    if (c == 0) {
        *status = TALLY_ERR_EMPTY;
        return 0.0;
    }
    *status = TALLY_OK;
    return sum_as_double(p) / (double)c;
}

/* Adds a*b exactly (as two doubles; exact unless it under- or overflows). */
static void add_product(tally_exact *e, double a, double b)
{
    double hi = a * b;
    double lo = fma(a, b, -hi);
    tally_exact_add(e, hi);
    tally_exact_add(e, lo);
}

/* Streams: sum (x - m)^2 = sum x^2 - 2 m sum x + c m^2, with sum x^2 exact and the rest formed
 * from exact two-term products. */
static double stream_sqdev(const tally_partial *p, double m)
{
    tally_exact e = p->fsq;
    double sx_hi, sx_lo;
    if (tally_type_is_float(p->type)) {
        tally_exact t = p->fsum;
        sx_hi = tally_exact_round(&t);
        if (isfinite(sx_hi)) {
            tally_exact_add(&t, -sx_hi);
            sx_lo = tally_exact_round(&t);
        } else {
            sx_lo = 0.0;
        }
    } else if (tally_type_is_signed_int(p->type)) {
        sx_hi = (double)p->isum;
        sx_lo = (double)(p->isum - (__int128)sx_hi);
    } else {
        sx_hi = (double)p->usum;
        __int128 d = (__int128)(p->usum - (unsigned __int128)sx_hi);
        sx_lo = (double)d;
    }
    add_product(&e, -2.0 * m, sx_hi);
    add_product(&e, -2.0 * m, sx_lo);
    double c = (double)counted(p);
    double a = c * m, b = fma(c, m, -a);
    add_product(&e, a, m);
    add_product(&e, b, m);
    double s = tally_exact_round(&e);
    return s < 0 ? 0.0 : s;
}

tally_status tally_partial_result(const tally_partial *p, tally_op op, int ddof,
                                  const tally_exact *sqdev, tally_result *r)
{
    int fl = tally_type_is_float(p->type);
    int sgn = tally_type_is_signed_int(p->type);
    int has_val = p->n > p->nans;
    r->op = op;
    r->status = TALLY_OK;
    r->index = 0;
    r->value.u64 = 0;
    r->type = tally_wide_type(p->type);
    switch (op) {
    case TALLY_SUM:
        if (fl) r->value.f64 = tally_exact_round(&p->fsum);
        else if (sgn) {
            if (p->isum > INT64_MAX || p->isum < INT64_MIN) r->status = TALLY_ERR_OVERFLOW;
            else r->value.i64 = (int64_t)p->isum;
        } else {
            if (p->usum > UINT64_MAX) r->status = TALLY_ERR_OVERFLOW;
            else r->value.u64 = (uint64_t)p->usum;
        }
        break;
    case TALLY_PROD:
        if (fl) r->value.f64 = p->fprod * tally_prod_lanes(p->lanes);
        else if (p->prod_zero) r->value.u64 = 0;
        else if (p->prod_ovf) r->status = TALLY_ERR_OVERFLOW;
        else if (sgn) {
            if (p->iprod > INT64_MAX) r->status = TALLY_ERR_OVERFLOW;
            else r->value.i64 = (int64_t)p->iprod;
        } else r->value.u64 = (uint64_t)p->uprod;
        break;
    case TALLY_MIN:
    case TALLY_MAX:
        if (p->n == 0) r->status = TALLY_ERR_EMPTY;
        else if (fl && !p->omit_nan && p->nans) r->value.f64 = NAN;
        else if (!has_val) r->status = TALLY_ERR_EMPTY;
        else extreme_value(p, op == TALLY_MIN ? p->kmin : p->kmax, r);
        break;
    case TALLY_ARGMIN:
    case TALLY_ARGMAX:
        if (p->n == 0) r->status = TALLY_ERR_EMPTY;
        else if (fl && !p->omit_nan && p->nans) {
            r->value.f64 = NAN;
            r->index = p->first_nan;
        } else if (!has_val) r->status = TALLY_ERR_EMPTY;
        else {
            extreme_value(p, op == TALLY_ARGMIN ? p->kmin : p->kmax, r);
            r->index = op == TALLY_ARGMIN ? p->imin : p->imax;
        }
        break;
    case TALLY_AND:
    case TALLY_OR:
    case TALLY_XOR:
        bits_result(p, op, r);
        break;
    case TALLY_COUNT:
        r->type = TALLY_U64;
        r->value.u64 = counted(p);
        break;
    case TALLY_MEAN:
    case TALLY_VAR: {
        r->type = TALLY_F64;
        tally_status st;
        double m = tally_partial_mean(p, &st);
        if (st != TALLY_OK) { r->status = st; break; }
        if (op == TALLY_MEAN) { r->value.f64 = m; break; }
        uint64_t c = counted(p);
        if (ddof < 0 || c <= (uint64_t)ddof) { r->status = TALLY_ERR_DOMAIN; break; }
        double s = sqdev ? tally_exact_round(sqdev) : stream_sqdev(p, m);
        r->value.f64 = s / (double)(c - (uint64_t)ddof);
        break;
    }
    }
    return r->status;
}
