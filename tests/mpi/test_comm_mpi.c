/* The MPI communicator (src/mpi/comm.c) on however many ranks mpirun
 * starts: sums added in rank order, the same bits on every rank (also past
 * one chunk of the gather); broadcasts from rank 0; the first failing
 * rank's status and message on every rank; a flag set on one rank seen by
 * all.  Each check passes only if it passes on every rank; rank 0 prints
 * the TAP lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/comm.h"
#include "base/err.h"

static int count, failed;

/* One TAP line on rank 0 for a check that must hold on every rank. */
static void check(gpc_comm *c, int ok, const char *what)
{
    int bad = gpc_comm_any(c, !ok);
    count++;
    failed += bad;
    if (gpc_comm_rank(c) == 0)
        printf("%sok %d - %d ranks: %s\n", bad ? "not " : "", count, gpc_comm_size(c), what);
}

/* Rank r's i-th number: magnitudes far apart, so that another order of
 * addition would round differently. */
static double value(int r, size_t i)
{
    return (r % 2 ? 1e-16 : 1.0) * (1.0 + (double)(i % 7)) + (double)r * 1e-3 / 3.0;
}

static void check_sum(gpc_comm *c, size_t n, const char *what)
{
    int R = gpc_comm_size(c), me = gpc_comm_rank(c), ok = 1;
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = value(me, i);
    ok &= gpc_comm_sum(c, v, n) == GPC_OK;
    for (size_t i = 0; i < n && ok; i++) {
        double want = value(0, i);
        for (int r = 1; r < R; r++)
            want += value(r, i);
        ok &= v[i] == want;
    }
    free(v);
    check(c, ok, what);
}

int main(void)
{
    gpc_comm *c = gpc_comm_world();
    int me = gpc_comm_rank(c), R = gpc_comm_size(c);
    check_sum(c, 1000, "a sum is added in rank order, the same bits on every rank");
    check_sum(c, ((size_t)1 << 20) + 5, "and so is one longer than a gather's chunk");

    double b[4] = {me + 0.5, -me, 3.0, me * 1e300};
    int ok = gpc_comm_broadcast(c, b, 4) == GPC_OK && b[0] == 0.5 && b[1] == 0.0 &&
             b[2] == 3.0 && b[3] == 0.0;
    check(c, ok, "a broadcast gives rank 0's numbers to all");

    check(c, gpc_comm_status(c, GPC_OK) == GPC_OK, "no failure: every rank goes on");
    int bad = R > 1 ? 1 : 0, st = GPC_OK;
    if (me == bad)
        st = gpc_fail(GPC_EINPUT, "rank %d cannot read its rows", me);
    if (me == R - 1 && R > 2) /* a later failure does not win */
        st = gpc_fail(GPC_ENUM, "rank %d failed later", me);
    int out = gpc_comm_status(c, st);
    char want[64];
    if (me == bad || bad == 0)
        snprintf(want, sizeof want, "rank %d cannot read its rows", bad);
    else
        snprintf(want, sizeof want, "rank %d: rank %d cannot read its rows", bad, bad);
    check(c, out == GPC_EINPUT && strcmp(gpc_errmsg(), want) == 0,
          "one rank's failure reaches every rank with its status and message, naming it");

    check(c, gpc_comm_any(c, me == R - 1) == 1 && gpc_comm_any(c, 0) == 0,
          "a flag set on the last rank is seen by all");

    if (me == 0)
        printf("1..%d\n", count);
    return failed ? 1 : 0;
}
