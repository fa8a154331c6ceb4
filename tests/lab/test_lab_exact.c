/* The exact reference of tally bench is itself checked against exact integer arithmetic:
 * floats in a narrow exponent range are integers in units of 2^-43, so their sum is an
 * __int128 whose conversion to double is correctly rounded. */
#include "lab_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void expect_eq(double got, double want, const char *what)
{
    if (memcmp(&got, &want, sizeof got) != 0 && !(isnan(got) && isnan(want))) {
        fprintf(stderr, "FAIL %s: got %.17g, want %.17g\n", what, got, want);
        ++failures;
    }
}

static double exact_of(const double *x, int n)
{
    lab_exact acc;
    lab_exact_init(&acc);
    for (int i = 0; i < n; ++i) lab_exact_add(&acc, x[i]);
    return lab_exact_round(&acc);
}

int main(void)
{
    /* Hand-made cases: ties to even, cancellation, huge plus tiny, signed zero, inf and NaN. */
    double two53 = 9007199254740992.0;
    { double x[] = { two53, 1.0 }; expect_eq(exact_of(x, 2), two53, "2^53 + 1 ties to even (down)"); }
    { double x[] = { two53, 3.0 }; expect_eq(exact_of(x, 2), two53 + 4.0, "2^53 + 3 ties to even (up)"); }
    { double x[] = { two53, 1.0, 1e-300 }; expect_eq(exact_of(x, 3), two53 + 2.0, "2^53 + 1 + tiny rounds up"); }
    { double x[] = { 1e308, 1e308, -1e308, -1e308, 1e-320 }; expect_eq(exact_of(x, 5), 1e-320, "cancellation keeps a subnormal"); }
    { double x[] = { 1e308, 1e308 }; expect_eq(exact_of(x, 2), INFINITY, "overflow gives inf"); }
    { double x[] = { 0.1, 0.2, -0.3 }; expect_eq(exact_of(x, 3), 2.7755575615628914e-17, "0.1 + 0.2 - 0.3 exactly"); }
    { double x[] = { 1.0, -1.0 }; expect_eq(exact_of(x, 2), 0.0, "x - x is 0"); }
    { double x[] = { INFINITY, 1.0 }; expect_eq(exact_of(x, 2), INFINITY, "inf"); }
    { double x[] = { INFINITY, -INFINITY }; expect_eq(exact_of(x, 2), NAN, "inf - inf is NaN"); }
    { double x[] = { NAN, 1.0 }; expect_eq(exact_of(x, 2), NAN, "NaN propagates"); }
    { double x[] = { -5.5, -0.25 }; expect_eq(exact_of(x, 2), -5.75, "negative sums"); }
    { double x[] = { 0x1p-1074, 0x1p-1074, 0x1p-1074 }; expect_eq(exact_of(x, 3), 0x3p-1074, "subnormals add exactly"); }

    /* Random floats against __int128. */
    uint64_t state = 12345;
    for (int trial = 0; trial < 200; ++trial) {
        int n = 1 + (int)(lab_splitmix(&state) % 5000);
        lab_exact acc;
        lab_exact_init(&acc);
        __int128 units = 0; /* in 2^-43 */
        for (int i = 0; i < n; ++i) {
            uint64_t h = lab_splitmix(&state);
            int32_t m = (int32_t)(h & 0xFFFFFF) * ((h >> 24) & 1 ? -1 : 1);
            int e = (int)((h >> 32) % 41) - 20;      /* x = m * 2^(e - 23): |x| < 2^(e + 1) */
            float x = ldexpf((float)m, e - 23);
            lab_exact_add(&acc, x);
            units += (__int128)m * ((__int128)1 << (e - 23 + 43));
        }
        double want = ldexp((double)units, -43);   /* __int128 -> double rounds correctly */
        char what[64];
        snprintf(what, sizeof what, "random trial %d (n = %d)", trial, n);
        expect_eq(lab_exact_round(&acc), want, what);
    }

    /* The bench's reference: sum, min and max of f32 data. */
    {
        float x[5] = { 3.5f, -1.25f, 16777216.0f, 1.0f, -0.0f };
        lab_reference ref;
        lab_reference_compute(x, 5, &ref);
        expect_eq(ref.sum, 16777219.25, "reference sum of f32 values (more bits than an f32 holds)");
        expect_eq(ref.min, -1.25, "reference min");
        expect_eq(ref.max, 16777216.0, "reference max");
        if (!(ref.sum_abs >= 16777221.75)) { fprintf(stderr, "FAIL sum_abs %.17g\n", ref.sum_abs); ++failures; }
    }

    if (failures) { fprintf(stderr, "%d failure(s)\n", failures); return 1; }
    printf("exact reference: all checks passed\n");
    return 0;
}
