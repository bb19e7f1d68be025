/* The processes of a run (base/comm) as this build has them, one: rank 0
 * of 1 whose collectives leave their arguments alone; the shares of a
 * batch among R processes cover it once, in order, their sizes differing
 * by one at most; and the shard statistics packed into one vector (for
 * the processes to sum) come back exactly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "base/comm.h"
#include "base/err.h"
#include "sparse/shard.h"
#include "tap.h"

static void check_world(void)
{
    gpc_comm *c = gpc_comm_world();
    double v[3] = {1.5, -2.0, 1e300}, w[3];
    memcpy(w, v, sizeof v);
    TEST_OK(gpc_comm_rank(c) == 0 && gpc_comm_size(c) == 1, "one process: rank 0 of 1");
    TEST_OK(gpc_comm_sum(c, w, 3) == GPC_OK && memcmp(v, w, sizeof v) == 0 &&
                gpc_comm_broadcast(c, w, 3) == GPC_OK && memcmp(v, w, sizeof v) == 0,
            "one process: its sum and broadcast are its own numbers");
    TEST_OK(gpc_comm_status(c, GPC_OK) == GPC_OK && gpc_comm_status(c, GPC_ENUM) == GPC_ENUM &&
                gpc_comm_any(c, 0) == 0 && gpc_comm_any(c, 7) == 1,
            "one process: its status and flag are its own");
}

static void check_shares(void)
{
    int ok = 1;
    for (size_t n = 0; n <= 40; n++)
        for (int R = 1; R <= 6; R++) {
            size_t next = 0, lo = n, hi = 0;
            for (int r = 0; r < R; r++) {
                gpc_comm_share s = gpc_comm_share_of(n, r, R);
                ok &= s.first == next;
                next = s.first + s.count;
                lo = s.count < lo ? s.count : lo;
                hi = s.count > hi ? s.count : hi;
            }
            ok &= next == n && hi - lo <= 1;
        }
    TEST_OK(ok, "shares of 0 to 40 places among 1 to 6 processes: each place once, in "
                "order, sizes within one of each other");
    gpc_comm_share big = gpc_comm_share_of((size_t)1 << 62, 3, 4);
    TEST_OK(big.first == ((size_t)3 << 60) && big.count == ((size_t)1 << 60),
            "shares of 2^62 places do not overflow");
}

static void check_pack(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gpc_shard_stats *a = gpc_shard_stats_alloc(4, 3, 2, 5), *b = gpc_shard_stats_alloc(4, 3, 2, 5);
    a->rows = 123456789;
    a->lambda = -gsl_rng_uniform(r);
    for (size_t i = 0; i < 12; i++)
        a->G->data[i] = gsl_rng_uniform(r) - 0.5;
    for (size_t c = 0; c < 3; c++)
        for (size_t i = 0; i < 16; i++)
            a->H[c]->data[i] = gsl_rng_uniform(r) - 0.5;
    for (size_t j = 0; j < 5; j++)
        a->dtheta[j] = gsl_rng_uniform(r);
    for (size_t i = 0; i < 8; i++)
        a->dZ->data[i] = gsl_rng_uniform(r);
    size_t len = gpc_shard_stats_packed(a);
    double *buf = malloc((len + 1) * sizeof *buf);
    buf[len] = 42.0; /* a guard past the end */
    gpc_shard_stats_pack(a, buf);
    gpc_shard_stats_unpack(b, buf);
    int same = b->rows == a->rows && b->lambda == a->lambda &&
               gsl_matrix_equal(a->G, b->G) && gsl_matrix_equal(a->dZ, b->dZ) &&
               memcmp(a->dtheta, b->dtheta, 5 * sizeof(double)) == 0;
    for (size_t c = 0; c < 3; c++)
        same &= gsl_matrix_equal(a->H[c], b->H[c]);
    TEST_OK(len == 2 + 12 + 48 + 5 + 8 && same && buf[len] == 42.0,
            "shard statistics packed into %zu numbers and back: the same bits, nothing "
            "written past the end", len);
    free(buf);
    gpc_shard_stats_free(a);
    gpc_shard_stats_free(b);
    gsl_rng_free(r);
}

int main(void)
{
    gpc_gsl_quiet();
    check_world();
    check_shares();
    check_pack();
    return tap_done();
}
