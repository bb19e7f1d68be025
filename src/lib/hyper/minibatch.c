#include "hyper/minibatch.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/progress.h"
#include "sparse/inducing.h"
#include "sparse/shard.h"
#include "sparse/svgp.h"

/* A new state: Z by k-means++ over the rows (seeded as the epochs' orders
 * are), q the prior, the hyperparameters k's. */
static int fresh(gpc_kernel *k, const gsl_matrix *X, const gpc_minibatch_opts *o,
                 gpc_train **out)
{
    size_t m = o->inducing < X->size1 ? o->inducing : X->size1;
    gpc_train *t = gpc_train_alloc(1, m, X->size2, gpc_kernel_nparams(k));
    int st = gpc_inducing_kmeanspp(X, m, (unsigned long)o->train.seed, t->s->Z);
    memcpy(t->theta, gpc_kernel_params(k), t->nparams * sizeof *t->theta);
    if (st != GPC_OK) {
        gpc_train_free(t);
        return st;
    }
    *out = t;
    return GPC_OK;
}

/* The state to start from: the checkpoint's when there is one (of this
 * run's settings and inducing inputs), else a fresh one. */
static int start(gpc_kernel *k, const gsl_matrix *X, const gpc_minibatch_opts *o,
                 gpc_minibatch_result *r)
{
    if (!o->checkpoint || access(o->checkpoint, F_OK) != 0)
        return fresh(k, X, o, &r->train);
    gpc_checkpoint_settings file;
    int st = gpc_checkpoint_read(o->checkpoint, k, &file, &r->train);
    if (st == GPC_OK)
        st = gpc_checkpoint_same(o->checkpoint, &file, &o->set);
    size_t m = o->inducing < X->size1 ? o->inducing : X->size1;
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

static int save(const gpc_minibatch_opts *o, const gpc_kernel *k, const gpc_train *t)
{
    return o->checkpoint ? gpc_checkpoint_write(o->checkpoint, &o->set, k, t) : GPC_OK;
}

/* After an epoch: its line (the mean of its steps' bound estimates, an
 * estimate of the bound over all rows), then its steps forgotten. */
static void epoch_line(const gpc_progress *clock, gpc_train *t)
{
    char head[256];
    gpc_info(1, "%s: bound about %.10g",
             gpc_progress_format(clock, (long)t->epoch, gpc_progress_clock(), head, sizeof head),
             t->epoch_bound / (double)(t->epoch_steps ? t->epoch_steps : 1));
    t->epoch_bound = 0.0;
    t->epoch_steps = 0;
}

int gpc_minibatch_fit(gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y, gpc_lik lik,
                      const gpc_minibatch_opts *o, gpc_minibatch_result *r)
{
    memset(r, 0, sizeof *r);
    if (X->tda != X->size2 || y->stride != 1)
        return gpc_fail(GPC_EUSAGE, "the minibatch fit takes contiguous rows");
    int st = start(k, X, o, r);
    if (st != GPC_OK)
        return st;
    gpc_train *t = r->train;
    gpc_train_data d = {X->size1, X->size2, X->data, y->data};
    gpc_svgp_lik sl = {gpc_shard_binary_lik, &lik};
    gpc_progress clock;
    gpc_progress_start(&clock, "epoch", (long)t->epoch, (long)o->epochs, gpc_progress_clock());
    clock.time_limit = o->time_limit;
    while (st == GPC_OK && t->epoch < o->epochs) {
        double bound;
        uint64_t epoch = t->epoch;
        if ((st = gpc_train_step(t, k, &d, sl, &o->train, &bound)) != GPC_OK)
            break;
        if (t->epoch != epoch) {
            epoch_line(&clock, t);
            st = save(o, k, t);
        }
        r->stopped = o->stop && o->stop();
        r->timed_out = o->time_limit > 0 &&
                       gpc_progress_clock() - clock.start >= o->time_limit;
        if (st == GPC_OK && (r->stopped || r->timed_out) && t->epoch < o->epochs) {
            st = save(o, k, t);
            break;
        }
        r->stopped = r->timed_out = 0;
    }
    if (st != GPC_OK)
        return st;
    /* the bound over all rows at the state reached */
    gpc_kernel_set_params(k, t->theta);
    st = gpc_svgp_factor(t->s, k);
    if (st == GPC_OK)
        st = gpc_svgp_gradient(t->s, k, X, y->data, sl, &r->bound, NULL, NULL);
    return st;
}
