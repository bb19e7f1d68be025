/* The epochs' row orders: each a permutation of the rows (for n prime, a
 * power of two, with many small factors, one row, and beyond 2^32 at sampled
 * places), the same for the same seed and epoch, different across epochs
 * and seeds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/stream.h"
#include "tap.h"

static int is_permutation(uint64_t seed, uint64_t epoch, uint64_t n)
{
    gpc_stream_order o = gpc_stream_order_for(seed, epoch, n);
    unsigned char *seen = calloc(n, 1);
    int ok = 1;
    for (uint64_t k = 0; k < n && ok; k++) {
        uint64_t r = gpc_stream_row(&o, k);
        ok = r < n && !seen[r];
        if (ok)
            seen[r] = 1;
    }
    free(seen);
    return ok;
}

int main(void)
{
    uint64_t sizes[] = {1, 2, 3, 7, 64, 97, 1000, 1024, 30030, 65536, 100003};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int ok = 1;
        for (uint64_t e = 0; e < 5; e++)
            ok &= is_permutation(42, e, sizes[s]);
        TEST_OK(ok, "n = %llu: every epoch's order is a permutation",
                (unsigned long long)sizes[s]);
    }
    gpc_stream_order a = gpc_stream_order_for(7, 3, 1000), b = gpc_stream_order_for(7, 3, 1000),
                     c = gpc_stream_order_for(7, 4, 1000), d = gpc_stream_order_for(8, 3, 1000);
    TEST_OK(a.a == b.a && a.c == b.c, "the same seed and epoch give the same order");
    int differ = 0, differ_seed = 0;
    for (uint64_t k = 0; k < 1000; k++) {
        differ += gpc_stream_row(&a, k) != gpc_stream_row(&c, k);
        differ_seed += gpc_stream_row(&a, k) != gpc_stream_row(&d, k);
    }
    TEST_OK(differ > 900 && differ_seed > 900,
            "another epoch or seed gives another order (%d, %d of 1000 places differ)", differ,
            differ_seed);
    /* beyond 2^32 rows: a k passes 2^64, so the product is taken in 128 bits */
    uint64_t big = (1ULL << 40) + 15;
    gpc_stream_order o = gpc_stream_order_for(1, 0, big);
    int ok = o.a > 1 && o.a < big;
    uint64_t k = big - 1, want = (uint64_t)(((unsigned __int128)o.a * k + o.c) % big);
    ok &= gpc_stream_row(&o, k) == want && gpc_stream_row(&o, 0) == o.c;
    TEST_OK(ok, "n = 2^40 + 15: rows from the full product");
    return tap_done();
}
