/* The processes of a run as MPI ranks (MPI_COMM_WORLD), for the build
 * `make MPI=1`; the same interface as the one-process base/comm.c, which
 * this file replaces there.  MPI starts at the first gpc_comm_world() and
 * stops at exit.  A failed MPI call aborts every rank (MPI's default
 * handler), so a broken collective never leaves a rank waiting. */
#include "base/comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "base/alloc.h"
#include "base/err.h"

struct gpc_comm {
    MPI_Comm comm;
    int rank, size;
};

static gpc_comm world;
static int started;

/* the longest message one rank's failure sends the others */
#define MESSAGE_MAX 1024
/* sums go through buffers of at most this many numbers per rank */
#define SUM_CHUNK ((size_t)1 << 20)

/* A process other than rank 0 that ends with an error leaves the message
 * to rank 0 when the error came through gpc_comm_status (every rank has
 * it, rank 0 says it); otherwise it waits this long before saying it, so
 * that an error every rank meets by itself (a usage error, an unreadable
 * file) is said once, by rank 0, whose abort ends the others first. */
#define QUIET_RANK_PAUSE_S 2
static int shared_error;

static void before_message(void)
{
    if (shared_error) {
        FILE *f = freopen("/dev/null", "w", stderr); /* failing, it is said twice */
        (void)f;
        return;
    }
    struct timespec t = {QUIET_RANK_PAUSE_S, 0};
    nanosleep(&t, NULL);
}

/* An ending process ends every rank: none is left waiting in a collective. */
static void abort_all(int status) { MPI_Abort(MPI_COMM_WORLD, status); }

/* Ranks other than 0 keep quiet (no progress lines, warnings or standard
 * output) and name themselves in an error message; every rank's end ends
 * them all. */
static void set_up_ranks(void)
{
    static char name[256];
    if (world.size == 1)
        return;
    if (world.rank != 0) {
        snprintf(name, sizeof name, "%s (rank %d)", gpc_progname(), world.rank);
        gpc_set_progname(name);
        gpc_err_mute = 1;
        FILE *f = freopen("/dev/null", "w", stdout); /* failing, stdout stays */
        (void)f;
    }
    gpc_err_set_hooks(world.rank != 0 ? before_message : NULL, abort_all);
}

static void finish(void)
{
    int done;
    MPI_Finalized(&done);
    if (!done)
        MPI_Finalize();
}

gpc_comm *gpc_comm_world(void)
{
    if (!started) {
        int on;
        MPI_Initialized(&on);
        if (!on)
            MPI_Init(NULL, NULL);
        atexit(finish);
        world.comm = MPI_COMM_WORLD;
        MPI_Comm_rank(world.comm, &world.rank);
        MPI_Comm_size(world.comm, &world.size);
        started = 1;
        set_up_ranks();
    }
    return &world;
}

int gpc_comm_rank(const gpc_comm *c) { return c->rank; }
int gpc_comm_size(const gpc_comm *c) { return c->size; }

/* Each rank adds one slice of the vector from rank 0's piece up, then
 * every rank gathers the sums: the same additions in the same order
 * whatever the timing or the reduction tree MPI_Allreduce
 * would have chosen, and about twice the vector sent and received per rank
 * (not R times, as gathering it whole would). */
int gpc_comm_sum(gpc_comm *c, double *buf, size_t n)
{
    int R = c->size;
    if (R == 1)
        return GPC_OK;
    size_t chunk = n < SUM_CHUNK ? n : SUM_CHUNK;
    int *count = gpc_mallocarray((size_t)R, sizeof *count);
    int *first = gpc_mallocarray((size_t)R, sizeof *first);
    int *from = gpc_mallocarray((size_t)R, sizeof *from);
    int *each = gpc_mallocarray((size_t)R, sizeof *each);
    /* R pieces of this rank's slice, at most chunk / R + 1 numbers each */
    double *pieces = gpc_mallocarray((size_t)R * (chunk / (size_t)R + 1), sizeof *pieces);
    double *mine = gpc_mallocarray(chunk / (size_t)R + 1, sizeof *mine);
    for (size_t at = 0; at < n; at += chunk) {
        size_t len = n - at < chunk ? n - at : chunk;
        for (int r = 0; r < R; r++) {
            gpc_comm_share sh = gpc_comm_share_of(len, r, R);
            count[r] = (int)sh.count;
            first[r] = (int)sh.first;
        }
        int m = count[c->rank];
        for (int r = 0; r < R; r++) {
            each[r] = m;
            from[r] = r * m;
        }
        MPI_Alltoallv(buf + at, count, first, MPI_DOUBLE, pieces, each, from, MPI_DOUBLE,
                      c->comm);
        for (int i = 0; i < m; i++) {
            double s = pieces[i];
            for (int r = 1; r < R; r++)
                s += pieces[(size_t)r * (size_t)m + (size_t)i];
            mine[i] = s;
        }
        MPI_Allgatherv(mine, m, MPI_DOUBLE, buf + at, count, first, MPI_DOUBLE, c->comm);
    }
    free(count);
    free(first);
    free(from);
    free(each);
    free(pieces);
    free(mine);
    return GPC_OK;
}

int gpc_comm_broadcast(gpc_comm *c, double *buf, size_t n)
{
    for (size_t at = 0; at < n; at += SUM_CHUNK) {
        int len = (int)(n - at < SUM_CHUNK ? n - at : SUM_CHUNK);
        MPI_Bcast(buf + at, len, MPI_DOUBLE, 0, c->comm);
    }
    return GPC_OK;
}

int gpc_comm_broadcast_bytes(gpc_comm *c, void *buf, size_t n)
{
    for (size_t at = 0; at < n; at += SUM_CHUNK) {
        int len = (int)(n - at < SUM_CHUNK ? n - at : SUM_CHUNK);
        MPI_Bcast((char *)buf + at, len, MPI_BYTE, 0, c->comm);
    }
    return GPC_OK;
}

int gpc_comm_status(gpc_comm *c, int st)
{
    if (c->size == 1)
        return st;
    int *all = gpc_mallocarray((size_t)c->size, sizeof *all), first = -1;
    MPI_Allgather(&st, 1, MPI_INT, all, 1, MPI_INT, c->comm);
    for (int r = 0; r < c->size && first < 0; r++)
        if (all[r] != GPC_OK)
            first = r;
    int out = first < 0 ? GPC_OK : all[first];
    free(all);
    if (first < 0)
        return GPC_OK;
    char msg[MESSAGE_MAX];
    shared_error = 1;
    if (c->rank == first)
        snprintf(msg, sizeof msg, "%s", gpc_errmsg());
    MPI_Bcast(msg, MESSAGE_MAX, MPI_CHAR, first, c->comm);
    msg[MESSAGE_MAX - 1] = '\0';
    if (c->rank == first)
        return out;
    return first == 0 ? gpc_fail(out, "%s", msg) : gpc_fail(out, "rank %d: %s", first, msg);
}

int gpc_comm_any(gpc_comm *c, int flag)
{
    int in = flag != 0, out = in;
    if (c->size > 1)
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, c->comm);
    return out;
}
