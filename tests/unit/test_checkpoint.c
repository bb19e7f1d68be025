/* Checkpoints of the minibatch trainer: written and read back, the state
 * and the settings are the same bits; a run continued from a checkpoint
 * ends where an uninterrupted one does; every way a file can be damaged
 * (cut short anywhere, a row too short, another kernel) is refused naming
 * the file; a failed write leaves the old checkpoint in place. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "kernels/kernel.h"
#include "liks/lik.h"
#include "sparse/checkpoint.h"
#include "sparse/inducing.h"
#include "sparse/shard.h"
#include "sparse/train.h"
#include "random_matrix.h"
#include "tap.h"

static int same_state(const gpc_train *a, const gpc_train *b)
{
    const gpc_svgp *s = a->s;
    size_t m = s->m, nadam = a->nparams + m * s->dim;
    if (b->s->m != m || b->s->C != s->C || b->s->dim != s->dim || b->nparams != a->nparams)
        return 0;
    int same = memcmp(a->theta, b->theta, a->nparams * sizeof(double)) == 0 &&
               memcmp(a->adam_m, b->adam_m, nadam * sizeof(double)) == 0 &&
               memcmp(a->adam_v, b->adam_v, nadam * sizeof(double)) == 0 &&
               memcmp(s->Z->data, b->s->Z->data, m * s->dim * sizeof(double)) == 0 &&
               memcmp(s->M->data, b->s->M->data, s->C * m * sizeof(double)) == 0 &&
               a->step == b->step && a->epoch == b->epoch && a->batch == b->batch &&
               a->jitter == b->jitter;
    for (size_t c = 0; c < s->C; c++)
        same &= memcmp(s->S[c]->data, b->s->S[c]->data, m * m * sizeof(double)) == 0;
    return same;
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    fwrite(text, 1, len, f);
    fclose(f);
}

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "r");
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    char *t = malloc(*len + 1);
    *len = fread(t, 1, *len, f);
    t[*len] = '\0';
    fclose(f);
    return t;
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    size_t n = 70, m = 6, d = 2;
    gsl_matrix *X = random_matrix(r, n, d);
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++)
        y[i] = X->data[i * d] + 0.3 * gsl_rng_uniform(r) > 0 ? 1.0 : -1.0;
    gpc_rows *rows = gpc_rows_memory(X->data, n, d, "X"), *labels = gpc_rows_memory(y, n, 1, "y");
    gpc_train_data D = {rows, labels};
    gpc_kernel *k;
    gpc_kernel_parse("ard+bias", d, &k);
    size_t np = gpc_kernel_nparams(k);
    gpc_lik gl = GPC_LIK_LOGISTIC;
    gpc_svgp_lik lik = {gpc_shard_binary_lik, &gl};
    gpc_train_opts o;
    gpc_train_defaults(&o);
    o.batch = 16;
    double b;

    gpc_train *a = gpc_train_alloc(1, m, d, np);
    gpc_inducing_kmeanspp(X, m, 2, a->s->Z);
    gpc_kernel_default_params(k, a->theta);
    for (int s = 0; s < 11; s++)
        gpc_train_step(a, k, &D, lik, &o, &b);
    gpc_checkpoint_settings set = {.likelihood = "logistic", .kernel = "ard+bias", .dim = d,
                                   .cases = n, .data_hash = 18446744073709551557ULL,
                                   .latent = 1, .batch = 16, .seed = 1, .rho = 0.2, .lr = 0.01,
                                   .fixed = "-", .fix_inducing = 0};
    char dir[] = "/tmp/gpc-checkpoint-XXXXXX", path[256], bad[256];
    TEST_OK(mkdtemp(dir) != NULL, "a directory for the checkpoints");
    snprintf(path, sizeof path, "%s/run.ckpt", dir);
    snprintf(bad, sizeof bad, "%s/bad.ckpt", dir);
    TEST_OK(gpc_checkpoint_write(path, &set, k, a) == GPC_OK, "a checkpoint is written");
    gpc_checkpoint_settings got;
    gpc_train *c = NULL;
    int st = gpc_checkpoint_read(path, k, &got, &c);
    TEST_OK(st == GPC_OK && same_state(a, c), "read back, the state is the same bits: %s",
            st ? gpc_errmsg() : "");
    TEST_OK(st == GPC_OK && got.data_hash == set.data_hash && got.cases == n &&
                got.batch == 16 && got.rho == 0.2 && got.lr == 0.01 &&
                !strcmp(got.kernel, "ard+bias") && !strcmp(got.likelihood, "logistic") &&
                !strcmp(got.fixed, "-"),
            "and the settings, the 64-bit data hash whole");

    /* continued from the file: the same end as straight on */
    for (int s = 11; s < 30; s++) {
        gpc_train_step(a, k, &D, lik, &o, &b);
        gpc_train_step(c, k, &D, lik, &o, &b);
    }
    TEST_OK(same_state(a, c), "30 steps straight and 11 + 19 through the file end in the same "
            "bits");

    /* damaged files */
    size_t len;
    char *text = read_text(path, &len);
    int cut_ok = 1;
    for (size_t cut = 0; cut < len; cut += len / 37 + 1) {
        gpc_train *t = NULL;
        write_text(bad, text, cut);
        if (gpc_checkpoint_read(bad, k, &got, &t) != GPC_EINPUT || t != NULL ||
            !strstr(gpc_errmsg(), "bad.ckpt"))
            cut_ok = 0;
    }
    write_text(bad, text, len - 1); /* only the last newline missing */
    gpc_train *t = NULL;
    cut_ok &= gpc_checkpoint_read(bad, k, &got, &t) == GPC_EINPUT;
    TEST_OK(cut_ok, "a checkpoint cut short anywhere is refused naming the file");
    char *last = strrchr(text, ' ');
    memmove(last, last + 1, strlen(last + 1) + 1); /* two numbers run together */
    write_text(bad, text, strlen(text));
    TEST_OK(gpc_checkpoint_read(bad, k, &got, &t) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "expected"),
            "a row with a number missing is refused: %s", gpc_errmsg());
    gpc_kernel *k2;
    gpc_kernel_parse("se+bias", d, &k2);
    TEST_OK(gpc_checkpoint_read(path, k2, &got, &t) == GPC_EINPUT,
            "a kernel of other hyperparameters is refused: %s", gpc_errmsg());
    gpc_kernel_free(k2);

    /* a write that fails (no such directory) leaves nothing */
    char nodir[300];
    snprintf(nodir, sizeof nodir, "%s/none/run.ckpt", dir);
    TEST_OK(gpc_checkpoint_write(nodir, &set, k, a) == GPC_EINPUT,
            "a checkpoint that cannot be written is an input/output error: %s", gpc_errmsg());

    unlink(path);
    unlink(bad);
    rmdir(dir);
    free(text);
    gpc_train_free(a);
    gpc_train_free(c);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gpc_rows_close(rows);
    gpc_rows_close(labels);
    free(y);
    gsl_rng_free(r);
    return tap_done();
}
