#include "hyper/minibatch.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/progress.h"
#include "sparse/bound.h"
#include "sparse/inducing.h"
#include "sparse/shard.h"
#include "sparse/stream.h"
#include "sparse/svgp.h"

/* k-means looks at all rows up to this many, or at this many of a seeded
 * order (the same rows whatever the file's format), so that choosing Z
 * takes neither memory nor time that grows with n. */
#define CANDIDATES_MIN 10000
#define CANDIDATES_PER_INPUT 20

/* The candidate rows for Z, read into a new matrix. */
static int candidates(gpc_rows *rows, size_t m, uint64_t seed, gsl_matrix **out)
{
    uint64_t n = gpc_rows_count(rows);
    size_t want = m * CANDIDATES_PER_INPUT > CANDIDATES_MIN ? m * CANDIDATES_PER_INPUT
                                                            : CANDIDATES_MIN;
    size_t c = n < want ? (size_t)n : want;
    gsl_matrix *X = gpc_matrix_alloc(c, gpc_rows_dim(rows));
    /* an order no epoch uses: the last epoch number */
    gpc_stream_order o = gpc_stream_order_for(seed, UINT64_MAX, n);
    int st = GPC_OK;
    for (size_t i = 0; i < c && st == GPC_OK; i++)
        st = gpc_rows_read(rows, c == n ? i : gpc_stream_row(&o, i), 1, X->data + i * X->tda);
    if (st != GPC_OK) {
        gsl_matrix_free(X);
        return st;
    }
    *out = X;
    return GPC_OK;
}

/* k's length scales, those not fixed, from the distances between the
 * inducing inputs Z; says where the first one starts. */
static void start_scales(gpc_kernel *k, const gsl_matrix *Z, const unsigned char *fixed)
{
    size_t np = gpc_kernel_nparams(k);
    double *before = gpc_mallocarray(np ? np : 1, sizeof *before);
    memcpy(before, gpc_kernel_params(k), np * sizeof *before);
    if (gpc_kernel_start_scales(k, Z) > 0) {
        double *theta = gpc_mallocarray(np, sizeof *theta);
        memcpy(theta, gpc_kernel_params(k), np * sizeof *theta);
        size_t first = np;
        for (size_t j = 0; j < np; j++) {
            if (fixed && fixed[j])
                theta[j] = before[j];
            if (theta[j] != before[j] && first == np)
                first = j;
        }
        gpc_kernel_set_params(k, theta);
        if (first < np)
            gpc_info(1, "the length scales start where the inducing inputs' median pair is "
                     "one apart (%s %.4g); give hyperparameters (-p, -H) to start elsewhere",
                     gpc_kernel_param_label(k, first), theta[first]);
        free(theta);
    }
    free(before);
}

/* A new state: Z by k-means over the candidate rows (seeded as the
 * epochs' orders are), q the prior, the hyperparameters k's. */
static int fresh(gpc_kernel *k, gpc_rows *rows, const gpc_minibatch_opts *o, gpc_train **out)
{
    uint64_t n = gpc_rows_count(rows);
    size_t m = o->inducing < n ? o->inducing : (size_t)n;
    gsl_matrix *X;
    int st = candidates(rows, m, o->train.seed, &X);
    if (st != GPC_OK)
        return st;
    gpc_train *t = gpc_train_alloc(o->latent, m, gpc_rows_dim(rows), gpc_kernel_nparams(k));
    st = gpc_inducing_kmeans(X, m, (unsigned long)o->train.seed, GPC_KMEANS_ITERATIONS, t->s->Z);
    gsl_matrix_free(X);
    if (st == GPC_OK && o->start_scales)
        start_scales(k, t->s->Z, o->train.fixed);
    memcpy(t->theta, gpc_kernel_params(k), t->nparams * sizeof *t->theta);
    if (st != GPC_OK) {
        gpc_train_free(t);
        return st;
    }
    *out = t;
    return GPC_OK;
}

/* The bound over all rows at the state of s, read in blocks of 512 (the
 * blocks of sparse/svgp, summed in the same order). */
#define BOUND_BLOCK 512

static int full_bound(gpc_svgp *s, const gpc_kernel *k, const gpc_train_data *d,
                      gpc_svgp_lik lik, gpc_comm *comm, double *bound)
{
    /* each process its share of the rows, the shares added in order */
    gpc_comm_share sh = gpc_comm_share_of(gpc_rows_count(d->rows), gpc_comm_rank(comm),
                                          gpc_comm_size(comm));
    uint64_t end = sh.first + sh.count;
    gpc_shard_stats *st = gpc_shard_stats_alloc(s->m, s->C, s->dim, 0);
    gsl_matrix *Xb = gpc_matrix_alloc(BOUND_BLOCK, s->dim);
    double yb[BOUND_BLOCK];
    st->kernel_grads = 0;
    int rc = GPC_OK;
    for (uint64_t first = sh.first; first < end && rc == GPC_OK; first += BOUND_BLOCK) {
        size_t b = end - first < BOUND_BLOCK ? (size_t)(end - first) : BOUND_BLOCK;
        gsl_matrix_view v = gsl_matrix_submatrix(Xb, 0, 0, b, s->dim);
        rc = gpc_rows_read(d->rows, first, b, Xb->data);
        if (rc == GPC_OK)
            rc = gpc_rows_read(d->labels, first, b, yb);
        if (rc == GPC_OK)
            rc = gpc_shard_add_rows(k, s->Z, s->L, s->M, s->S, &v.matrix, yb, first, lik.fn,
                                    lik.ctx, st);
    }
    rc = gpc_shard_stats_sum(comm, st, rc);
    if (rc == GPC_OK)
        rc = gpc_bound_eval(k, s->Z, s->L, s->M, s->S, st, 1.0, bound, NULL, NULL, NULL, NULL, NULL);
    gsl_matrix_free(Xb);
    gpc_shard_stats_free(st);
    return rc;
}

/* The state to start from: the checkpoint's when there is one (of this
 * run's settings and inducing inputs), else a fresh one. */
static int start(gpc_kernel *k, gpc_rows *rows, const gpc_minibatch_opts *o,
                 gpc_minibatch_result *r)
{
    if (!o->checkpoint || access(o->checkpoint, F_OK) != 0)
        return fresh(k, rows, o, &r->train);
    gpc_checkpoint_settings file;
    int st = gpc_checkpoint_read(o->checkpoint, k, &file, &r->train);
    if (st == GPC_OK)
        st = gpc_checkpoint_same(o->checkpoint, &file, &o->set);
    uint64_t n = gpc_rows_count(rows);
    size_t m = o->inducing < n ? o->inducing : (size_t)n;
    if (st == GPC_OK && r->train->s->m != m)
        st = gpc_fail(GPC_EINPUT, "%s: the checkpoint is of another run (%zu inducing inputs "
                      "there, %zu here): give the options and data it was written with, or "
                      "remove it to start afresh", o->checkpoint, r->train->s->m, m);
    if (st != GPC_OK) {
        gpc_train_free(r->train);
        r->train = NULL;
        return st;
    }
    r->resumed = 1;
    gpc_info(1, "continuing from %s: epoch %llu, step %llu", o->checkpoint,
             (unsigned long long)r->train->epoch, (unsigned long long)r->train->step);
    return GPC_OK;
}

/* The checkpoint, written by the first process alone; its failure is
 * every process's. */
static int save(const gpc_minibatch_opts *o, const gpc_kernel *k, const gpc_train *t)
{
    int st = GPC_OK;
    if (o->checkpoint && gpc_comm_rank(o->train.comm) == 0)
        st = gpc_checkpoint_write(o->checkpoint, &o->set, k, t);
    return gpc_comm_status(o->train.comm, st);
}

/* Whether to stop after this step: a signal on any process, or the time
 * limit by the first process's clock. */
static void stop_now(const gpc_minibatch_opts *o, const gpc_progress *clock,
                     gpc_minibatch_result *r)
{
    gpc_comm *comm = o->train.comm;
    int late = gpc_comm_rank(comm) == 0 && o->time_limit > 0 &&
               gpc_progress_clock() - clock->start >= o->time_limit;
    r->stopped = gpc_comm_any(comm, o->stop && o->stop());
    r->timed_out = gpc_comm_any(comm, late);
}

/* After an epoch: its line (the mean of its steps' bound estimates, an
 * estimate of the bound over all rows, and the note every note_every
 * epochs), then its steps forgotten. */
static void epoch_line(const gpc_progress *clock, gpc_train *t, gpc_kernel *k,
                       const gpc_minibatch_opts *o)
{
    char head[256], note[512] = "";
    if (o->note && o->note_every && t->epoch % o->note_every == 0) {
        o->note(o->note_ctx, t, k, note + 2, sizeof note - 2);
        note[0] = ';';
        note[1] = ' ';
    }
    gpc_info(1, "%s: bound about %.10g%s",
             gpc_progress_format(clock, (long)t->epoch, gpc_progress_clock(), head, sizeof head),
             t->epoch_bound / (double)(t->epoch_steps ? t->epoch_steps : 1), note);
    t->epoch_bound = 0.0;
    t->epoch_steps = 0;
}

/* The first process's start on every process (q, Z, the hyperparameters
 * and Adam's moments), so that they step from the same bits whatever each
 * computed or read. */
static void share_start(gpc_comm *comm, gpc_train *t, gpc_kernel *k)
{
    gpc_svgp *s = t->s;
    size_t nadam = t->nparams + s->m * s->dim;
    if (gpc_comm_size(comm) == 1)
        return;
    gpc_comm_broadcast(comm, s->M->data, s->C * s->m);
    for (size_t c = 0; c < s->C; c++)
        gpc_comm_broadcast(comm, s->S[c]->data, s->m * s->m);
    gpc_comm_broadcast(comm, s->Z->data, s->m * s->dim);
    gpc_comm_broadcast(comm, t->theta, t->nparams);
    gpc_comm_broadcast(comm, t->adam_m, nadam);
    gpc_comm_broadcast(comm, t->adam_v, nadam);
    gpc_kernel_set_params(k, t->theta);
}

/* Whether every process has rank 0's options and data (by the settings a
 * checkpoint keeps, the data's hash among them); if not, the first that
 * does not says where it differs. */
static int ranks_agree(gpc_comm *comm, const gpc_checkpoint_settings *mine)
{
    if (gpc_comm_size(comm) == 1)
        return GPC_OK;
    gpc_checkpoint_settings first = *mine;
    char what[2400], here[32];
    gpc_comm_broadcast_bytes(comm, &first, sizeof first);
    snprintf(here, sizeof here, "on rank %d", gpc_comm_rank(comm));
    int st = GPC_OK;
    if (gpc_checkpoint_diff(&first, mine, "on rank 0", here, what, sizeof what))
        st = gpc_fail(GPC_EUSAGE, "the ranks were given other options or data (%s): give "
                      "every rank the same command", what);
    return gpc_comm_status(comm, st);
}

int gpc_minibatch_fit(gpc_kernel *k, const gpc_train_data *data, const gpc_minibatch_opts *o,
                      gpc_minibatch_result *r)
{
    memset(r, 0, sizeof *r);
    int st = ranks_agree(o->train.comm, &o->set);
    if (st != GPC_OK)
        return st;
    st = gpc_comm_status(o->train.comm, start(k, data->rows, o, r));
    if (st != GPC_OK) { /* another process may have failed where this one did not */
        gpc_train_free(r->train);
        r->train = NULL;
        return st;
    }
    share_start(o->train.comm, r->train, k);
    gpc_train *t = r->train;
    gpc_svgp_lik sl = o->lik;
    gpc_progress clock;
    gpc_progress_start(&clock, "epoch", (long)t->epoch, (long)o->epochs, gpc_progress_clock());
    clock.time_limit = o->time_limit;
    while (st == GPC_OK && t->epoch < o->epochs) {
        double bound;
        uint64_t epoch = t->epoch;
        if ((st = gpc_train_step(t, k, data, sl, &o->train, &bound)) != GPC_OK)
            break;
        if (t->epoch != epoch) {
            epoch_line(&clock, t, k, o);
            st = save(o, k, t);
        }
        stop_now(o, &clock, r);
        if (st == GPC_OK && (r->stopped || r->timed_out) && t->epoch < o->epochs) {
            st = save(o, k, t);
            break;
        }
        r->stopped = r->timed_out = 0;
    }
    if (st != GPC_OK)
        return st;
    gpc_kernel_set_params(k, t->theta);
    st = gpc_svgp_factor(t->s, k);
    return st == GPC_OK ? full_bound(t->s, k, data, sl, o->train.comm, &r->bound) : st;
}
