/* Array generators of the adversarial harness (see families.h). Values are made in double
 * precision with the element type's own precision and range, so that the conversion to the
 * element type is exact. */
#include "families.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *adv_family_name(adv_family f)
{
    static const char *names[] = {
#define ADV_NAME(E, name, fl, in) #name,
        ADV_FAMILIES(ADV_NAME)
#undef ADV_NAME
    };
    return (unsigned)f < ADV_FAMILY_COUNT ? names[f] : "?";
}

int adv_family_for(adv_family f, tally_type t)
{
    static const unsigned char fl[] = {
#define ADV_FL(E, name, f, i) f,
        ADV_FAMILIES(ADV_FL)
#undef ADV_FL
    };
    static const unsigned char in[] = {
#define ADV_IN(E, name, f, i) i,
        ADV_FAMILIES(ADV_IN)
#undef ADV_IN
    };
    if ((unsigned)f >= ADV_FAMILY_COUNT) return 0;
    return (t == TALLY_F32 || t == TALLY_F64) ? fl[f] : in[f];
}

uint64_t adv_next(adv_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
uint64_t adv_below(adv_rng *r, uint64_t n) { return adv_next(r) % n; }
double adv_unit(adv_rng *r) { return (double)(adv_next(r) >> 11) * 0x1p-53; }
static int coin(adv_rng *r) { return (int)(adv_next(r) & 1); }
static double normal(adv_rng *r)
{
    double u = adv_unit(r), v = adv_unit(r);
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* ---- the element type's floating-point format ---------------------------------------------- */
typedef struct fmt {
    int f32;
    int emax;       /* largest exponent: values below 2^(emax+1) */
    int emin;       /* least normal exponent */
    int esub;       /* exponent of the least subnormal */
    int mbits;      /* significand bits, the hidden one included */
} fmt;
static const fmt F64 = {0, 1023, -1022, -1074, 53};
static const fmt F32 = {1, 127, -126, -149, 24};

static double to_type(const fmt *f, double v) { return f->f32 ? (double)(float)v : v; }

/* A value with exponent e (2^e <= |v| < 2^(e+1)), random significand, sign s (+1/-1, 0 random). */
static double val_exp(adv_rng *r, const fmt *f, int e, int s)
{
    if (e > f->emax) e = f->emax;
    if (e < f->esub) e = f->esub;
    double v;
    if (e >= f->emin) {
        uint64_t m = (1ull << (f->mbits - 1)) | (adv_next(r) & ((1ull << (f->mbits - 1)) - 1));
        v = ldexp((double)m, e - (f->mbits - 1));
    } else { /* subnormal: k * 2^esub with k in [2^(e - esub), 2^(e - esub + 1)) */
        int b = e - f->esub;
        uint64_t k = (1ull << b) | (adv_next(r) & ((1ull << b) - 1));
        v = ldexp((double)k, f->esub);
    }
    if (s == 0) s = coin(r) ? 1 : -1;
    return s < 0 ? -v : v;
}
static int exp_between(adv_rng *r, int lo, int hi) { return lo + (int)adv_below(r, (uint64_t)(hi - lo + 1)); }

static void shuffle(adv_rng *r, double *x, uint64_t n)
{
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = adv_below(r, i);
        double t = x[i - 1];
        x[i - 1] = x[j];
        x[j] = t;
    }
}
static int cmp_abs_up(const void *a, const void *b)
{
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return x < y ? -1 : x > y;
}
static int cmp_abs_down(const void *a, const void *b) { return cmp_abs_up(b, a); }

/* A position of class k: 0 first, 1 last, 2 next to a power-of-two boundary, 3 anywhere. */
static uint64_t position(adv_rng *r, uint64_t n)
{
    switch (adv_below(r, 4)) {
    case 0: return 0;
    case 1: return n - 1;
    case 2: {
        uint64_t b = 1ull << (adv_below(r, 24) + 3);
        if (b >= n) return adv_below(r, n);
        uint64_t k = b * (1 + adv_below(r, n / b));
        if (k >= n) k = b;
        int64_t d = (int64_t)adv_below(r, 3) - 1;
        uint64_t p = (uint64_t)((int64_t)k + d);
        return p < n ? p : n - 1;
    }
    default: return adv_below(r, n);
    }
}

/* ---- float families (x: n doubles, each exact in the element type) ------------------------ */
static void gen_float(adv_rng *r, adv_family fam, const fmt *f, double *x, uint64_t n, adv_case *c)
{
    const int f32 = f->f32;
    switch (fam) {
    case ADV_CANCEL_WIDE: { /* pairs x, -x with |x| ~ 10^k N(0,1), and a few small terms */
        const int kmax = f32 ? 30 : 300;
        uint64_t few = 1 + adv_below(r, 5);
        if (few > n) few = n;
        uint64_t npairs = (n - few) / 2, i = 0;
        for (uint64_t p = 0; p < npairs; p++) {
            int k = (int)adv_below(r, (uint64_t)kmax + 1);
            if (adv_below(r, 4) == 0) k = -k;
            double v = to_type(f, pow(10.0, k) * normal(r));
            if (v == 0 || isinf(v)) v = to_type(f, pow(10.0, k));
            x[i++] = v;
            x[i++] = -v;
        }
        while (i < n) {
            int j = (int)adv_below(r, (uint64_t)kmax + 1);
            x[i++] = to_type(f, pow(10.0, -j) * normal(r));
        }
        if (coin(r)) shuffle(r, x, n);
        break;
    }
    case ADV_HUGE_TINY: { /* a few huge terms that cancel among many tiny ones */
        double H, t;
        int mode = (int)adv_below(r, 4);
        if (mode == 0) { /* the classic: [1e300, tiny x m, -1e300] */
            H = f32 ? 1e38 : 1e300;
            t = f32 ? (double)1e-38f : 1e-300;
        } else {
            H = val_exp(r, f, f->emax - (int)adv_below(r, 30), 1);
            t = val_exp(r, f, exp_between(r, f->esub + 5, f->emin + 60), 1);
        }
        for (uint64_t i = 0; i < n; i++) {
            if (mode == 3) x[i] = val_exp(r, f, (int)floor(log2(t)) + exp_between(r, -5, 5), 0);
            else x[i] = (mode == 2 && coin(r)) ? -t : t;
        }
        if (n >= 2) {
            uint64_t pairs = 1 + (mode == 3 ? adv_below(r, 3) : 0);
            for (uint64_t p = 0; p < pairs && 2 * p + 1 < n; p++) {
                double h = p == 0 ? H : val_exp(r, f, f->emax - (int)adv_below(r, 200), 1);
                uint64_t a, b;
                switch (adv_below(r, 3)) {
                case 0: a = p; b = n - 1 - p; break;
                case 1: a = adv_below(r, n - 1); b = a + 1; break;
                default: a = adv_below(r, n); do b = adv_below(r, n); while (b == a); break;
                }
                x[a] = h;
                x[b] = -h;
            }
        }
        break;
    }
    case ADV_PARTIAL_OVERFLOW: { /* huge values whose running sums leave the range */
        uint64_t half = n / 2;
        for (uint64_t i = 0; i < half; i++) {
            double p = val_exp(r, f, f->emax - (int)adv_below(r, 3), 1);
            x[i] = p;
            double q = p;
            switch (adv_below(r, 4)) {
            case 0: q = val_exp(r, f, f->emax - (int)adv_below(r, 3), 1); break; /* unrelated */
            case 1: q = to_type(f, p * 0.5); break;
            default: break; /* exact cancellation */
            }
            x[half + i] = -q;
        }
        if (n % 2) x[n - 1] = val_exp(r, f, exp_between(r, f->esub, f->emax), 0);
        switch (adv_below(r, 3)) {
        case 0: break; /* every positive first: the running sum overflows at once */
        case 1: shuffle(r, x, n); break;
        default: qsort(x, n, sizeof *x, cmp_abs_down); break;
        }
        break;
    }
    case ADV_TIES: { /* sums exactly halfway between two doubles, or a hair off it */
        /* X with exponent e; half an f64 ulp of X is 2^(e - 53), made of 2^c equal pieces */
        int e = f32 ? exp_between(r, -90, 127) : exp_between(r, f->emin + 120, f->emax - 2);
        double X = val_exp(r, f, e, 0);
        int c = (int)adv_below(r, 3);
        uint64_t pieces = 1ull << c, i = 0;
        double piece = ldexp(1.0, e - 53 - c);
        if (coin(r)) piece = -piece;
        if (n == 0) break;
        x[i++] = X;
        for (uint64_t k = 0; k < pieces && i < n; k++) x[i++] = piece;
        if (i < n) { /* the sticky piece: 0, or a tiny push either way */
            double tiny = coin(r) ? ldexp(1.0, e - 53 - c - 40) : ldexp(1.0, f->esub);
            int s = (int)adv_below(r, 3);
            x[i++] = s == 0 ? 0.0 : s == 1 ? tiny : -tiny;
        }
        while (i + 1 < n) { /* noise that cancels exactly */
            double y = val_exp(r, f, exp_between(r, e - 30, e + 30 > f->emax ? f->emax : e + 30), 0);
            x[i++] = y;
            x[i++] = -y;
        }
        if (i < n) x[i++] = 0.0;
        shuffle(r, x, n);
        break;
    }
    case ADV_SORTED:
        for (uint64_t i = 0; i < n; i++) x[i] = val_exp(r, f, exp_between(r, f->esub, f->emax), 0);
        qsort(x, n, sizeof *x, coin(r) ? cmp_abs_up : cmp_abs_down);
        break;
    case ADV_SUBNORMAL: {
        int mode = (int)adv_below(r, 3);
        for (uint64_t i = 0; i < n; i++) {
            int e = mode == 1 && coin(r) ? exp_between(r, f->emin, f->emin + 3)
                                         : exp_between(r, f->esub, f->emin - 1);
            x[i] = val_exp(r, f, e, mode == 2 ? 1 : 0);
        }
        break;
    }
    case ADV_SPECIALS: {
        for (uint64_t i = 0; i < n; i++) x[i] = val_exp(r, f, exp_between(r, -20, 20), 0);
        c->omit_nan = coin(r);
        if (n == 0) break;
        int kind = (int)adv_below(r, 9);
        uint64_t count = 1 + adv_below(r, 3);
        for (uint64_t k = 0; k < count; k++) {
            uint64_t p = position(r, n);
            switch (kind) {
            case 0: x[p] = NAN; break;
            case 1: x[p] = INFINITY; break;
            case 2: x[p] = -INFINITY; break;
            case 3: x[p] = INFINITY; x[position(r, n)] = -INFINITY; break;
            case 4: x[p] = NAN; x[position(r, n)] = coin(r) ? INFINITY : -INFINITY; break;
            case 5: x[p] = -0.0; break;
            default: break;
            }
        }
        if (kind == 6) for (uint64_t i = 0; i < n; i++) x[i] = -0.0;
        if (kind == 7) for (uint64_t i = 0; i < n; i++) x[i] = coin(r) ? -0.0 : 0.0;
        if (kind == 8) for (uint64_t i = 0; i < n; i++) x[i] = NAN;
        break;
    }
    case ADV_PRICES:
        for (uint64_t i = 0; i < n; i++) x[i] = to_type(f, (double)adv_below(r, 10000000) / 100.0);
        break;
    case ADV_WIDE40:
        for (uint64_t i = 0; i < n; i++) x[i] = val_exp(r, f, exp_between(r, -40, 40), 0);
        break;
    case ADV_FULL_RANGE:
        for (uint64_t i = 0; i < n; i++) x[i] = val_exp(r, f, exp_between(r, f->esub, f->emax), 0);
        break;
    case ADV_CONSTANT: {
        double v = val_exp(r, f, exp_between(r, f->esub, f->emax), 0);
        for (uint64_t i = 0; i < n; i++) x[i] = v;
        if (n > 1 && coin(r)) x[n - 1] = val_exp(r, f, exp_between(r, f->esub, f->emax), 0);
        break;
    }
    case ADV_ALTERNATING: { /* +H, -H', +H, ... with H' within a few ulps of H, and a remainder */
        int e = exp_between(r, f->emin + 60, f->emax - 1);
        double H = val_exp(r, f, e, 1);
        for (uint64_t i = 0; i < n; i++) {
            double h = H;
            if (adv_below(r, 4) == 0) h = to_type(f, H + ldexp((double)((int)adv_below(r, 9) - 4), e - (f->mbits - 1)));
            x[i] = (i & 1) ? -h : h;
        }
        if (n) x[adv_below(r, n)] = val_exp(r, f, exp_between(r, f->esub, e), 0);
        break;
    }
    case ADV_BATCH_SPREAD: {
        /* exponents spread over S binades, S at and around the bounds of the GPU exact sums'
         * batch paths (reduce.comp: f32 batches within 24 exponent fields; f64 within 31, and
         * the former 7 and 14), the least one near the smallest exponent those paths take
         * (f32: the least normal; f64: field 53) or the greatest near the top of the range;
         * the two edge exponents only, or any between, or mostly the top one (running sums that
         * grow to the bound); one sign or both; zeros of either sign sprinkled in */
        static const int s32[] = {15, 22, 23, 24, 25, 30};
        static const int s64[] = {6, 7, 13, 14, 29, 30, 31, 32, 40};
        int S = f32 ? s32[adv_below(r, 6)] : s64[adv_below(r, 9)];
        int lo;
        switch (adv_below(r, 4)) {
        case 0: lo = (f32 ? f->emin : 53 - 1023) - 2 + (int)adv_below(r, 5); break;
        case 1: lo = f->emax - S - (int)adv_below(r, 6); break;
        default: lo = f32 ? exp_between(r, -40, 40) : exp_between(r, -400, 400); break;
        }
        int sign = (int)adv_below(r, 3) - 1, mode = (int)adv_below(r, 3), zeros = adv_below(r, 4) == 0;
        for (uint64_t i = 0; i < n; i++) {
            int e = mode == 0 ? (coin(r) ? lo : lo + S)
                  : mode == 1 ? exp_between(r, lo, lo + S)
                              : (adv_below(r, 32) == 0 ? lo : lo + S);
            x[i] = val_exp(r, f, e, sign);
            if (zeros && adv_below(r, 16) == 0) x[i] = coin(r) ? -0.0 : 0.0;
        }
        break;
    }
    default:
        for (uint64_t i = 0; i < n; i++) x[i] = 0.0;
        break;
    }
}

/* ---- integer families (x: n values, each in the element type's range) --------------------- */
static int adv_signed(tally_type t)
{
    return t == TALLY_I8 || t == TALLY_I16 || t == TALLY_I32 || t == TALLY_I64;
}
static void int_range(tally_type t, __int128 *lo, __int128 *hi)
{
    switch (t) {
    case TALLY_I8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case TALLY_U8: *lo = 0; *hi = UINT8_MAX; break;
    case TALLY_I16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case TALLY_U16: *lo = 0; *hi = UINT16_MAX; break;
    case TALLY_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case TALLY_U32: *lo = 0; *hi = UINT32_MAX; break;
    case TALLY_I64: *lo = INT64_MIN; *hi = INT64_MAX; break;
    default: *lo = 0; *hi = UINT64_MAX; break;
    }
}
static __int128 clamp128(__int128 v, __int128 lo, __int128 hi) { return v < lo ? lo : v > hi ? hi : v; }
static __int128 rand_in(adv_rng *r, __int128 lo, __int128 hi)
{
    unsigned __int128 span = (unsigned __int128)(hi - lo) + 1;
    unsigned __int128 v = ((unsigned __int128)adv_next(r) << 64) | adv_next(r);
    return span ? lo + (__int128)(v % span) : lo + (__int128)v;
}

static void gen_int(adv_rng *r, adv_family fam, tally_type t, __int128 *x, uint64_t n)
{
    __int128 lo, hi;
    int_range(t, &lo, &hi);
    switch (fam) {
    case ADV_INT_EDGE: {
        int mode = (int)adv_below(r, 3);
        if (mode == 0 && n > 0) { /* land the exact sum on an edge of the result type */
            for (uint64_t i = 0; i + 1 < n; i++) x[i] = rand_in(r, lo / 4, hi / 4);
            __int128 s = 0;
            for (uint64_t i = 0; i + 1 < n; i++) s += x[i];
            __int128 rmin = adv_signed(t) ? (__int128)INT64_MIN : 0;
            __int128 rmax = adv_signed(t) ? (__int128)INT64_MAX : (__int128)UINT64_MAX;
            __int128 targets[] = {rmax, rmax + 1, rmax - 1, rmin, rmin - 1, 0};
            __int128 want = targets[adv_below(r, adv_signed(t) ? 6 : 3)];
            x[n - 1] = clamp128(want - s, lo, hi);
        } else if (mode == 1) { /* running sums far beyond the type, an exact total inside it */
            uint64_t half = n / 2;
            for (uint64_t i = 0; i < half; i++) {
                x[i] = hi - rand_in(r, 0, 3);
                x[half + i] = adv_signed(t) ? -x[i] : rand_in(r, 0, 3);
            }
            if (n % 2) x[n - 1] = rand_in(r, lo, hi);
        } else { /* the type's extremes only */
            for (uint64_t i = 0; i < n; i++) x[i] = coin(r) ? hi : lo;
        }
        break;
    }
    case ADV_INT_EXTREMES:
        for (uint64_t i = 0; i < n; i++) {
            switch (adv_below(r, 6)) {
            case 0: x[i] = lo; break;
            case 1: x[i] = hi; break;
            case 2: x[i] = 0; break;
            case 3: x[i] = adv_signed(t) ? -1 : 2; break;
            case 4: x[i] = 1; break;
            default: x[i] = rand_in(r, lo, hi); break;
            }
        }
        break;
    case ADV_CONSTANT: {
        __int128 v = coin(r) ? hi : rand_in(r, lo, hi);
        for (uint64_t i = 0; i < n; i++) x[i] = v;
        break;
    }
    default: /* INT_RANDOM: full width, or a random narrower width */
        for (uint64_t i = 0; i < n; i++) {
            __int128 v = rand_in(r, lo, hi);
            if (coin(r)) v /= (__int128)1 << adv_below(r, 64);
            x[i] = v;
        }
        break;
    }
}

/* ---- sizes ---------------------------------------------------------------------------------- */
/* Around kernel boundaries: multiples of powers of two and of the CUDA reduce's batch (256
 * threads x 8 vectors of 16 bytes) times typical grid sizes (132 SMs), +-2. */
static uint64_t pick_n(adv_rng *r, tally_type t, uint64_t max_n)
{
    uint64_t n;
    const uint64_t batch = 2048ull * 16 / tally_type_size(t);
    const uint64_t cls = adv_below(r, 100);
    if (cls < 30) {
        n = adv_below(r, 70);
    } else if (cls < 75) { /* small multiples of a power of two or of the batch */
        static const uint64_t mult[] = {1, 2, 3, 4, 5, 7, 8};
        uint64_t base = adv_below(r, 3) == 0 ? batch : (1ull << (3 + adv_below(r, 14)));
        n = base * mult[adv_below(r, sizeof mult / sizeof mult[0])];
        n = (uint64_t)((int64_t)n + (int64_t)adv_below(r, 5) - 2);
    } else if (cls < 94) {
        n = adv_below(r, 1u << 17);
    } else if (cls < 98) { /* grid boundaries: batches x SMs, the many-batch launch shapes */
        static const uint64_t mult[] = {16, 64, 131, 132, 133, 264, 396, 511, 512, 513, 1024};
        n = batch * mult[adv_below(r, sizeof mult / sizeof mult[0])];
        n = (uint64_t)((int64_t)n + (int64_t)adv_below(r, 5) - 2);
    } else {
        n = adv_below(r, max_n + 1);
    }
    if (n > max_n) n = max_n - adv_below(r, 3);
    return n;
}

int adv_case_make(uint64_t seed, uint64_t index, const adv_limits *lim, adv_case *c)
{
    memset(c, 0, sizeof *c);
    adv_rng r0 = {seed ^ (index * 0xd1b54a32d192ed03ull)};
    c->seed = adv_next(&r0);
    adv_rng r = {c->seed};
    /* family, then a type it takes */
    for (;;) {
        c->family = (adv_family)adv_below(&r, ADV_FAMILY_COUNT);
        if (lim->families && !(lim->families >> c->family & 1)) continue;
        tally_type t;
        if (adv_family_for(c->family, TALLY_F64) && (!adv_family_for(c->family, TALLY_I8) || coin(&r)))
            t = adv_below(&r, 5) < 3 ? TALLY_F64 : TALLY_F32;
        else
            t = (tally_type)adv_below(&r, 8);
        if (!adv_family_for(c->family, t)) continue;
        if (lim->types && !(lim->types >> t & 1)) continue;
        c->type = t;
        break;
    }
    c->n = pick_n(&r, c->type, lim->max_n);
    c->offset = (unsigned)adv_below(&r, 4);
    c->omit_nan = adv_below(&r, 4) == 0;
    c->ddof = (int)adv_below(&r, 2);
    size_t es = tally_type_size(c->type);
    c->data = malloc((size_t)(c->n + c->offset + 1) * es);
    if (!c->data) return -1;
    memset(c->data, 0x5a, (size_t)(c->n + c->offset + 1) * es); /* never zeros */
    void *a = (char *)c->data + (size_t)c->offset * es;
    if ((c->type == TALLY_F32 || c->type == TALLY_F64)) {
        double *x = malloc((size_t)(c->n + 1) * sizeof *x);
        if (!x) { free(c->data); c->data = NULL; return -1; }
        gen_float(&r, c->family, c->type == TALLY_F32 ? &F32 : &F64, x, c->n, c);
        for (uint64_t i = 0; i < c->n; i++) {
            if (c->type == TALLY_F32) ((float *)a)[i] = (float)x[i];
            else ((double *)a)[i] = x[i];
        }
        free(x);
    } else {
        __int128 *x = malloc((size_t)(c->n + 1) * sizeof *x);
        if (!x) { free(c->data); c->data = NULL; return -1; }
        gen_int(&r, c->family, c->type, x, c->n);
        for (uint64_t i = 0; i < c->n; i++) {
            switch (c->type) {
            case TALLY_I8: ((int8_t *)a)[i] = (int8_t)x[i]; break;
            case TALLY_U8: ((uint8_t *)a)[i] = (uint8_t)x[i]; break;
            case TALLY_I16: ((int16_t *)a)[i] = (int16_t)x[i]; break;
            case TALLY_U16: ((uint16_t *)a)[i] = (uint16_t)x[i]; break;
            case TALLY_I32: ((int32_t *)a)[i] = (int32_t)x[i]; break;
            case TALLY_U32: ((uint32_t *)a)[i] = (uint32_t)x[i]; break;
            case TALLY_I64: ((int64_t *)a)[i] = (int64_t)x[i]; break;
            default: ((uint64_t *)a)[i] = (uint64_t)x[i]; break;
            }
        }
        free(x);
    }
    return 0;
}

void adv_case_free(adv_case *c)
{
    free(c->data);
    c->data = NULL;
}
