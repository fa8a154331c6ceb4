/* More than 2^32 elements: a u8 sum over 2^32 + 3 bytes (4 GiB), with the extremes placed past
 * index 2^32 so 64-bit counts and indices are exercised end to end. Labelled "large". */
#include "reference.h"

static void test_u8_over_4g(void **state)
{
    (void)state;
    uint64_t n = (1ull << 32) + 3;
    uint8_t *x = malloc(n);
    if (!x) {
        print_message("cannot allocate 4 GiB: skipped\n");
        skip();
    }
    /* bytes i % 251 + 1 (never 0, at most 251), then two marked extremes */
    unsigned __int128 want = 0;
    for (uint64_t i = 0; i < n; i++) x[i] = (uint8_t)(i % 251 + 1);
    x[n - 2] = 0;
    x[n - 1] = 255;
    for (uint64_t i = 0; i < n; i++) want += x[i];
    tally_context *ctx;
    assert_int_equal(tally_create(&ctx, NULL), TALLY_OK);
    tally_op ops[5] = {TALLY_SUM, TALLY_COUNT, TALLY_ARGMIN, TALLY_ARGMAX, TALLY_XOR};
    tally_result r[5];
    assert_int_equal(tally_reduce_many(ctx, TALLY_U8, x, n, ops, 5, NULL, r), TALLY_OK);
    assert_true(r[0].value.u64 == (uint64_t)want);
    assert_true(r[0].value.u64 > (1ull << 32) * 100);
    assert_true(r[1].value.u64 == n);
    assert_true(r[2].index == n - 2 && r[2].value.u64 == 0);
    assert_true(r[3].index == n - 1 && r[3].value.u64 == 255);
    tally_result ref;
    ref_reduce(TALLY_U8, x, n, TALLY_XOR, 0, 0, &ref);
    assert_result(&r[4], &ref, "xor over 2^32+3 bytes");
    tally_destroy(ctx);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_u8_over_4g)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
