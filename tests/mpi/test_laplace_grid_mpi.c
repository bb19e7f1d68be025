/* The binary Laplace approximation with its matrices spread over all the
 * ranks mpirun starts (ScaLAPACK, the squarest grid, blocks of 16) against
 * the same on plain matrices in each rank: evidence, gradient, predictions
 * to 1e-10, the same bits on every rank; n not a multiple of the block, and
 * n below one block so that some ranks hold nothing.  Every value checked
 * is the same on every rank (the same-bits line checks it), so rank 0's
 * TAP lines speak for all. */
#include <stdio.h>

#include "tap.h"
#include "grid_laplace.h"

int main(void)
{
    gpc_comm *c = gpc_comm_world();
    if (gpc_comm_rank(c) != 0 && !freopen("/dev/null", "w", stdout))
        return 3;
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    int p, q;
    gpc_pgrid_squarest(gpc_comm_size(c), &p, &q);
    TEST_OK(gpc_pgrid_request(p, q, 16) == GPC_OK, "%d ranks: the squarest grid, blocks of 16",
            gpc_comm_size(c));
    const gpc_pgrid *g = gpc_pgrid_default();
    grid_laplace_all(r, g, 301, 1e-10);
    grid_laplace_compare(r, g, "ard+jitter", GPC_LIK_LOGISTIC, 10, 1e-10);
    gsl_rng_free(r);
    return tap_done();
}
