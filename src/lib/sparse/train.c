#include "sparse/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/parallel.h"
#include "sparse/bound.h"
#include "sparse/inducing.h"
#include "sparse/natgrad.h"
#include "sparse/stream.h"

/* Adam's constants, as Kingma & Ba recommend them. */
#define ADAM_BETA1 0.9
#define ADAM_BETA2 0.999
#define ADAM_EPS 1e-8

/* A natural step halved this often and still indefinite is a failure. */
#define MAX_HALVINGS 30

void gpc_train_defaults(gpc_train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->batch = 256;
    o->rho = 0.2;
    o->lr = 0.01;
    o->seed = 1;
    o->comm = gpc_comm_world();
}

gpc_train *gpc_train_alloc(size_t C, size_t m, size_t dim, size_t nparams)
{
    gpc_train *t = gpc_calloc(1, sizeof *t);
    size_t nadam = nparams + m * dim;
    t->s = gpc_svgp_alloc(C, m, dim);
    t->nparams = nparams;
    t->theta = gpc_calloc(nparams ? nparams : 1, sizeof *t->theta);
    t->adam_m = gpc_calloc(nadam ? nadam : 1, sizeof *t->adam_m);
    t->adam_v = gpc_calloc(nadam ? nadam : 1, sizeof *t->adam_v);
    return t;
}

void gpc_train_free(gpc_train *t)
{
    if (!t)
        return;
    gpc_svgp_free(t->s);
    free(t->theta);
    free(t->adam_m);
    free(t->adam_v);
    free(t);
}

/* An epoch's batches: T = ceil(n / B) of them, batch k the places
 * floor(k n / T) .. floor((k + 1) n / T) - 1 of the epoch's order, so that
 * their sizes differ by one at most (a last batch of the few rows left
 * over would carry n / few times each row's weight, and its noise undoes
 * what the epoch learnt). */
static uint64_t batches_per_epoch(uint64_t n, size_t B) { return (n + B - 1) / B; }

static uint64_t batch_start(uint64_t k, uint64_t n, uint64_t T)
{
    return (uint64_t)((unsigned __int128)k * n / T);
}

/* The rows of batch t->batch, gathered into Xb and yb (first..first + b - 1
 * of the epoch's order). */
static int gather(const gpc_train *t, const gpc_train_data *d, uint64_t seed, uint64_t first,
                  size_t b, gsl_matrix *Xb, double *yb)
{
    uint64_t n = gpc_rows_count(d->rows);
    gpc_stream_order o = gpc_stream_order_for(seed, t->epoch, n);
    int st = GPC_OK;
    for (size_t i = 0; i < b && st == GPC_OK; i++) {
        uint64_t r = gpc_stream_row(&o, first + i);
        st = gpc_rows_read(d->rows, r, 1, Xb->data + i * Xb->tda);
        if (st == GPC_OK)
            st = gpc_rows_read(d->labels, r, 1, yb + i);
    }
    return st;
}

/* The natural step on every class's q (whose inverses are Sinv), halved
 * until every precision stays positive definite; q as it was if that
 * fails. */
static int natural_step(gpc_svgp *s, const gsl_matrix *dM, gsl_matrix *const *dS,
                        gsl_matrix *const *Sinv, double rho)
{
    gsl_matrix *M0 = gpc_matrix_alloc(s->C, s->m), **S0 = gpc_mallocarray(s->C, sizeof *S0);
    gsl_matrix_memcpy(M0, s->M);
    for (size_t c = 0; c < s->C; c++) {
        S0[c] = gpc_matrix_alloc(s->m, s->m);
        gsl_matrix_memcpy(S0[c], s->S[c]);
    }
    int rc = GPC_ENUM;
    for (int h = 0; h < MAX_HALVINGS && rc != GPC_OK; h++, rho *= 0.5) {
        rc = GPC_OK;
        for (size_t c = 0; c < s->C && rc == GPC_OK; c++) {
            gsl_vector_view mc = gsl_matrix_row(s->M, c);
            gsl_vector_const_view dm = gsl_matrix_const_row(dM, c);
            rc = gpc_natgrad_step(&mc.vector, s->S[c], Sinv[c], &dm.vector, dS[c], rho);
        }
        if (rc != GPC_OK) { /* back to the start for the shorter step */
            gsl_matrix_memcpy(s->M, M0);
            for (size_t c = 0; c < s->C; c++)
                gsl_matrix_memcpy(s->S[c], S0[c]);
        }
    }
    gsl_matrix_free(M0);
    for (size_t c = 0; c < s->C; c++)
        gsl_matrix_free(S0[c]);
    free(S0);
    return rc;
}

/* One Adam step up gradient g on x (count entries), skipping fixed ones;
 * m and v are the moments, t the step number from 1. */
static void adam(double *x, const double *g, double *m, double *v, size_t count,
                 const unsigned char *fixed, uint64_t t, double lr)
{
    double c1 = 1.0 - pow(ADAM_BETA1, (double)t), c2 = 1.0 - pow(ADAM_BETA2, (double)t);
    for (size_t j = 0; j < count; j++) {
        if (fixed && fixed[j])
            continue;
        m[j] = ADAM_BETA1 * m[j] + (1.0 - ADAM_BETA1) * g[j];
        v[j] = ADAM_BETA2 * v[j] + (1.0 - ADAM_BETA2) * g[j] * g[j];
        x[j] += lr * (m[j] / c1) / (sqrt(v[j] / c2) + ADAM_EPS);
    }
}

static int all_finite(const double *x, size_t count)
{
    for (size_t j = 0; j < count; j++)
        if (!isfinite(x[j]))
            return 0;
    return 1;
}

/* What a process does of the global step (gpc(7), Sparse method over
 * ranks): one process all of it; of several, rank 0 q's natural step and
 * rank 1 the gradient in (theta, Z), from the same summed statistics, and
 * the others the bound alone. */
enum { PART_ALL, PART_Q, PART_THETA, PART_BOUND };

static int global_part(const gpc_comm *c)
{
    int R = gpc_comm_size(c), r = gpc_comm_rank(c);
    return R == 1 ? PART_ALL : r == 0 ? PART_Q : r == 1 ? PART_THETA : PART_BOUND;
}

/* The bound's estimate and gradient on the batch, of which this process
 * holds the rows Xb (read with status rc): dM, dS (with the S_c^-1 into
 * Sinv), and the gradient in (theta, Z) into g (nparams + m dim), as far as
 * this process's part of the global step asks for them. */
static int batch_gradient(gpc_train *t, const gpc_kernel *k, const gsl_matrix *Xb,
                          const double *yb, int rc, gpc_svgp_lik lik, double scale,
                          const gpc_train_opts *o, double *bound, gsl_matrix *dM,
                          gsl_matrix **dS, gsl_matrix **Sinv, double *g)
{
    int part = global_part(o->comm), q = part == PART_ALL || part == PART_Q;
    int grad = part == PART_ALL || part == PART_THETA;
    gpc_svgp *s = t->s;
    size_t np = t->nparams;
    gpc_shard_stats *st = gpc_shard_stats_alloc(s->m, s->C, s->dim, np);
    gsl_matrix_view dZ = gsl_matrix_view_array(g + np, s->m, s->dim);
    st->input_grads = !o->fix_inducing; /* Z fixed: its gradient is not needed */
    gsl_matrix_set_zero(&dZ.matrix);
    if (rc == GPC_OK && Xb)
        rc = gpc_shard_add_rows(k, s->Z, s->L, s->M, s->S, Xb, yb, 0, lik.fn, lik.ctx, st);
    rc = gpc_shard_stats_sum(o->comm, st, rc);
    if (rc == GPC_OK)
        rc = gpc_bound_eval(k, s->Z, s->L, s->M, s->S, st, scale, bound, q ? dM : NULL,
                            q ? dS : NULL, q ? Sinv : NULL, grad ? g : NULL,
                            grad && !o->fix_inducing ? &dZ.matrix : NULL);
    if (rc == GPC_OK && !(isfinite(*bound) && (!grad || all_finite(g, np + s->m * s->dim))))
        rc = gpc_fail(GPC_ENUM, "the bound or its gradient is not finite at step %llu: "
                      "try a smaller --learning-rate", (unsigned long long)t->step + 1);
    gpc_shard_stats_free(st);
    return rc;
}

/* After the split global step: q from rank 0, the gradient g from rank 1,
 * added into every process (the others' zeros add nothing, exactly), so
 * that every process goes on from the same numbers.  rc: this process's
 * status, which every one learns first. */
static int share_parts(gpc_train *t, const gpc_train_opts *o, double *g, int rc)
{
    gpc_svgp *s = t->s;
    if (global_part(o->comm) == PART_ALL)
        return rc;
    if ((rc = gpc_comm_status(o->comm, rc)) != GPC_OK)
        return rc;
    size_t m = s->m, C = s->C, ng = t->nparams + m * s->dim;
    size_t nq = C * (m + m * m), len = nq + ng;
    double *v = gpc_calloc(len, sizeof *v);
    int part = global_part(o->comm);
    if (part == PART_Q) {
        memcpy(v, s->M->data, C * m * sizeof *v); /* M and S are contiguous */
        for (size_t c = 0; c < C; c++)
            memcpy(v + C * m + c * m * m, s->S[c]->data, m * m * sizeof *v);
    }
    if (part == PART_THETA)
        memcpy(v + nq, g, ng * sizeof *v);
    rc = gpc_comm_sum(o->comm, v, len);
    memcpy(s->M->data, v, C * m * sizeof *v);
    for (size_t c = 0; c < C; c++)
        memcpy(s->S[c]->data, v + C * m + c * m * m, m * m * sizeof *v);
    memcpy(g, v + nq, ng * sizeof *v);
    free(v);
    return rc;
}

int gpc_train_step(gpc_train *t, gpc_kernel *k, const gpc_train_data *d, gpc_svgp_lik lik,
                   const gpc_train_opts *o, double *bound)
{
    gpc_svgp *s = t->s;
    size_t np = t->nparams, nz = s->m * s->dim;
    uint64_t n = gpc_rows_count(d->rows), T = batches_per_epoch(n, o->batch),
             first = batch_start(t->batch, n, T);
    size_t b = (size_t)(batch_start(t->batch + 1, n, T) - first);
    /* this process's share of the batch (all of it when alone) */
    gpc_comm_share sh = gpc_comm_share_of(b, gpc_comm_rank(o->comm), gpc_comm_size(o->comm));
    gsl_matrix *Xb = sh.count ? gpc_matrix_alloc(sh.count, gpc_rows_dim(d->rows)) : NULL,
               *dM = gpc_matrix_alloc(s->C, s->m);
    gsl_matrix **dS = gpc_mallocarray(s->C, sizeof *dS),
               **Sinv = gpc_mallocarray(s->C, sizeof *Sinv);
    double *yb = gpc_mallocarray(sh.count ? sh.count : 1, sizeof *yb),
           *g = gpc_mallocarray(np + nz, sizeof *g);
    for (size_t c = 0; c < s->C; c++) {
        dS[c] = gpc_matrix_alloc(s->m, s->m);
        Sinv[c] = gpc_matrix_alloc(s->m, s->m);
    }
    int read = gather(t, d, o->seed, first + sh.first, sh.count, Xb, yb);
    gpc_parallel_blas(s->m); /* the m x m work: one thread below the parallel threshold */
    gpc_kernel_set_params(k, t->theta);
    /* the factor is the same on every process, and so is its failure; a
     * failure to read reaches the others through the sum */
    int rc = gpc_svgp_factor(s, k);
    if (rc == GPC_OK)
        rc = batch_gradient(t, k, Xb, yb, read, lik, (double)n / (double)b, o, bound, dM, dS,
                            Sinv, g);
    /* both step sizes shrink as 1 / sqrt(1 + epochs so far), counted in
     * steps (T make an epoch): a constant Adam step leaves the hyperparameters
     * and Z wandering about their optimum by the minibatches' noise */
    double shrink = 1.0 / sqrt(1.0 + (double)t->step / (double)T), lr = o->lr * shrink;
    int part = global_part(o->comm);
    if (rc == GPC_OK && (part == PART_ALL || part == PART_Q))
        rc = natural_step(s, dM, dS, Sinv, o->rho * shrink);
    rc = share_parts(t, o, g, rc);
    if (rc == GPC_OK) {
        t->step++;
        adam(t->theta, g, t->adam_m, t->adam_v, np, o->fixed, t->step, lr);
        if (!o->fix_inducing)
            adam(s->Z->data, g + np, t->adam_m + np, t->adam_v + np, nz, NULL, t->step, lr);
        t->jitter = fmax(t->jitter, s->jitter);
        t->epoch_bound += *bound;
        t->epoch_steps++;
        if (++t->batch == T) {
            t->batch = 0;
            t->epoch++;
        }
    }
    gpc_kernel_set_params(k, t->theta);
    gsl_matrix_free(Xb);
    gsl_matrix_free(dM);
    for (size_t c = 0; c < s->C; c++) {
        gsl_matrix_free(dS[c]);
        gsl_matrix_free(Sinv[c]);
    }
    free(dS);
    free(Sinv);
    free(yb);
    free(g);
    return rc;
}
