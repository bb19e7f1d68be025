/* Model files: a written model reads back exactly and predicts exactly as
 * the fitted state did; predictions do not depend on how test cases are
 * blocked; malformed files are refused with file and line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "hyper/evidence.h"
#include "methods/model.h"
#include "tap.h"

static char dir[] = "/tmp/gpc-test-model-XXXXXX";

static const char *path(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static gpc_model *fitted_model(gsl_rng *r, size_t n, size_t d)
{
    gpc_model *m = calloc(1, sizeof *m);
    m->X = gsl_matrix_alloc(n, d);
    m->y = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t l = 0; l < d; l++) {
            double x = gsl_rng_uniform(r) * 4 - 2;
            gsl_matrix_set(m->X, i, l, x);
            s += sin(x);
        }
        gsl_vector_set(m->y, i, s > 0 ? 1 : -1);
    }
    gpc_kernel_parse("ard+bias", d, &m->kernel);
    double th[4] = {1.0, -0.5, 0.2, -2.0};
    gpc_kernel_set_params(m->kernel, th);
    strcpy(m->method, "laplace");
    strcpy(m->fit, "none");
    m->lik = GPC_LIK_PROBIT;
    m->nclasses = 2;
    gpc_evidence *e = gpc_evidence_alloc(m->kernel, m->X, m->y, 2, m->lik, GPC_METHOD_LAPLACE);
    gpc_evidence_eval(e, th, &m->log_evidence, NULL);
    m->state = gsl_matrix_alloc(n, 1);
    gpc_evidence_state(e, m->state);
    gpc_evidence_free(e);
    return m;
}

static void write_file(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
}

static void expect_error(const char *name, const char *text, const char *msg)
{
    gpc_model *m = NULL;
    write_file(path(name), text);
    int st = gpc_model_read(path(name), &m);
    TEST_OK(st == GPC_EINPUT && strstr(gpc_errmsg(), msg) != NULL, "%s refused: %s", name,
            gpc_errmsg());
}

/* A multiclass model of method (softmax Laplace or one-vs-rest) on three
 * classes named by words, with a per-class kernel when per_class: fitted,
 * written, read back; the copy must predict the same bits, and every row's
 * probabilities sum to one. */
static void test_multiclass_round_trip(gsl_rng *r, gpc_method method, gpc_lik lik,
                                       const char *spec, const char *file)
{
    size_t n = 36, d = 2, C = 3, ns = 9;
    static char *const names[] = {"setosa", "versicolor", "virginica"};
    gpc_model m = {.lik = lik, .nclasses = C, .classes = names};
    m.X = gsl_matrix_alloc(n, d);
    m.y = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        double a = gsl_rng_uniform(r) * 4 - 2, b = gsl_rng_uniform(r) * 4 - 2;
        gsl_matrix_set(m.X, i, 0, a);
        gsl_matrix_set(m.X, i, 1, b);
        gsl_vector_set(m.y, i, a + b < -1 ? 0 : a - b < 0 ? 1 : 2);
    }
    gpc_kernel_parse(spec, d, &m.kernel);
    snprintf(m.method, sizeof m.method, "%s", gpc_method_name(method));
    strcpy(m.fit, "none");
    gpc_evidence *e = gpc_evidence_alloc(m.kernel, m.X, m.y, C, lik, method);
    int st = gpc_evidence_eval(e, gpc_kernel_params(m.kernel), &m.log_evidence, NULL);
    m.state = gsl_matrix_alloc(n, gpc_model_state_columns(&m));
    gpc_evidence_state(e, m.state);
    gpc_evidence_free(e);
    FILE *f = fopen(path(file), "w");
    st |= gpc_model_write(f, file, &m);
    fclose(f);
    gpc_model *b = NULL;
    st |= gpc_model_read(path(file), &b);
    TEST_OK(st == GPC_OK, "%s (%s): fitted, written and read back (%s)", m.method, spec,
            st ? gpc_errmsg() : "ok");
    if (st != GPC_OK)
        return;
    TEST_OK(b->nclasses == C && !strcmp(gpc_model_class(b, 2), "virginica") &&
                gsl_vector_equal(b->y, m.y) && gsl_matrix_equal(b->state, m.state) &&
                gpc_model_method(b) == gpc_method_get(method) &&
                gpc_kernel_nparams(b->kernel) == gpc_kernel_nparams(m.kernel),
            "%s (%s): classes, labels, state and method read back exactly", m.method, spec);
    gsl_matrix *Xs = gsl_matrix_alloc(ns, d);
    for (size_t i = 0; i < ns * d; i++)
        Xs->data[i] = gsl_rng_uniform(r) * 6 - 3;
    gpc_prediction *p1 = gpc_prediction_alloc(&m, ns), *p2 = gpc_prediction_alloc(b, ns);
    st = gpc_model_predict(&m, Xs, p1) | gpc_model_predict(b, Xs, p2);
    TEST_OK(st == GPC_OK && p1->prob->size2 == C && p1->cov->size2 == C * C &&
                gsl_matrix_equal(p1->mean, p2->mean) && gsl_matrix_equal(p1->cov, p2->cov) &&
                gsl_matrix_equal(p1->prob, p2->prob) && gsl_matrix_equal(p1->plugin, p2->plugin),
            "%s (%s): the model read back predicts the same bits", m.method, spec);
    double worst = 0.0;
    for (size_t i = 0; i < ns; i++) {
        double s1 = 0.0, s2 = 0.0;
        for (size_t c = 0; c < C; c++) {
            s1 += gsl_matrix_get(p1->prob, i, c);
            s2 += gsl_matrix_get(p1->plugin, i, c);
        }
        worst = fmax(worst, fmax(fabs(s1 - 1.0), fabs(s2 - 1.0)));
    }
    TEST_CLOSE(worst, 0.0, 0.0, 1e-12, "%s (%s): class probabilities sum to one", m.method,
               spec);
    gpc_prediction_free(p1);
    gpc_prediction_free(p2);
    gsl_matrix_free(Xs);
    gpc_model_free(b);
    gpc_kernel_free(m.kernel);
    gsl_matrix_free(m.X);
    gsl_vector_free(m.y);
    gsl_matrix_free(m.state);
    unlink(path(file));
}

/* A model fitted on a LIBSVM file numbered from 0 says so in one line after
 * dim, and reads back so; any other value of the line is refused. */
static void test_zero_based(gpc_model *m)
{
    m->zero_based = 1;
    FILE *f = fopen(path("z.txt"), "w");
    TEST_OK(gpc_model_write(f, "z.txt", m) == GPC_OK, "zero-based model written");
    fclose(f);
    m->zero_based = 0;
    char text[1 << 16];
    f = fopen(path("z.txt"), "r");
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    TEST_OK(strstr(text, "\ndim 2\nlibsvm zero-based\nhyperparameters 4\n") != NULL,
            "'libsvm zero-based' follows dim");
    gpc_model *b = NULL;
    int st = gpc_model_read(path("z.txt"), &b);
    TEST_OK(st == GPC_OK && b->zero_based, "read back numbered from 0 (%s)",
            st ? gpc_errmsg() : "ok");
    gpc_model_free(b);
    char *at = strstr(text, "zero-based");
    if (at) {
        memcpy(at, "one-based ", 10);
        expect_error("z1.txt", text, "z1.txt:7: expected 'libsvm zero-based', not 'libsvm "
                     "one-based'");
    }
}

int main(void)
{
    gpc_gsl_quiet();
    if (!mkdtemp(dir))
        return 99;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    gpc_model *m = fitted_model(r, 40, 2);
    /* words whose byte order is not the -1/+1 order, so a swap would show */
    static char *const class_names[] = {"zero", "one"};
    m->classes = class_names;

    FILE *f = fopen(path("m.txt"), "w");
    TEST_OK(gpc_model_write(f, "m.txt", m) == GPC_OK, "model written");
    fclose(f);
    gpc_model *b = NULL;
    int st = gpc_model_read(path("m.txt"), &b);
    TEST_OK(st == GPC_OK, "model read back (%s)", st ? gpc_errmsg() : "ok");
    if (st != GPC_OK)
        return tap_done();
    TEST_OK(strcmp(gpc_kernel_spec(b->kernel), "ard+bias") == 0, "kernel spec");
    TEST_OK(memcmp(gpc_kernel_params(b->kernel), gpc_kernel_params(m->kernel),
                   4 * sizeof(double)) == 0, "hyperparameters exact");
    TEST_OK(b->lik == GPC_LIK_PROBIT && b->log_evidence == m->log_evidence &&
                strcmp(b->fit, "none") == 0, "likelihood, evidence and fit exact");
    TEST_OK(gsl_matrix_equal(b->X, m->X) && gsl_vector_equal(b->y, m->y) &&
                gsl_matrix_equal(b->state, m->state), "training inputs, labels and mode exact");
    TEST_OK(strcmp(gpc_model_class(b, 0), "zero") == 0 && strcmp(gpc_model_class(b, 1), "one") == 0,
            "classes read back in order: %s %s", gpc_model_class(b, 0), gpc_model_class(b, 1));
    TEST_OK(!b->zero_based, "no 'libsvm' line: not numbered from 0");
    test_zero_based(m);

    /* predictions: blocks of 512 do not change anything, and p is the
     * probit average of the latent Gaussian */
    size_t ns = 700;
    gsl_matrix *Xs = gsl_matrix_alloc(ns, 2);
    for (size_t i = 0; i < ns * 2; i++)
        Xs->data[i] = gsl_rng_uniform(r) * 6 - 3;
    gpc_prediction *all = gpc_prediction_alloc(b, ns), *one = gpc_prediction_alloc(b, 1);
    gpc_model_predict(b, Xs, all);
    int inside = 1, agree = 1;
    for (size_t i = 0; i < ns; i++) {
        double pi = gsl_matrix_get(all->prob, i, 0);
        inside &= pi >= 0 && pi <= 1 && gsl_matrix_get(all->cov, i, 0) >= 0;
        agree &= fabs(pi - gpc_lik_predict(GPC_LIK_PROBIT, gsl_matrix_get(all->mean, i, 0),
                                           gsl_matrix_get(all->cov, i, 0))) < 1e-15;
    }
    TEST_OK(inside, "probabilities in [0,1], variances >= 0");
    TEST_OK(agree, "p = Phi(mean / sqrt(1 + var))");
    for (size_t i = 510; i < 515; i++) {
        gsl_matrix_view row = gsl_matrix_submatrix(Xs, i, 0, 1, 2);
        gpc_model_predict(m, &row.matrix, one);
        TEST_CLOSE(gsl_matrix_get(one->mean, 0, 0), gsl_matrix_get(all->mean, i, 0), 1e-13, 1e-15,
                   "case %zu alone: same latent mean", i);
        TEST_CLOSE(gsl_matrix_get(one->cov, 0, 0), gsl_matrix_get(all->cov, i, 0), 1e-12, 1e-15,
                   "case %zu alone: same latent variance", i);
    }

    expect_error("empty.txt", "", "not a gpc model file");
    expect_error("other.txt", "1 2 3\n", ":1: not a gpc model file");
    expect_error("v9.txt", "gpc-model 9\n", "version 9 is not supported");
    expect_error("badlik.txt",
                 "gpc-model 1\nmethod laplace\nlikelihood tanh\n", "badlik.txt:3:");
    expect_error("short.txt",
                 "gpc-model 1\nmethod laplace\nlikelihood probit\nkernel bias\ndim 1\n"
                 "hyperparameters 1\nlog_bias 0\nfit none\nlog_evidence -1\ntraining 2\n"
                 "1 0.5 0\n",
                 "short.txt:10: model file truncated: 2 training cases");
    expect_error("badlabel.txt",
                 "gpc-model 1\nmethod laplace\nlikelihood probit\nkernel bias\ndim 1\n"
                 "hyperparameters 1\nlog_bias 0\nfit none\nlog_evidence -1\ntraining 1\n"
                 "2 0.5 0\n",
                 "badlabel.txt:11: label must be -1 or 1");
    expect_error("wrongname.txt",
                 "gpc-model 1\nmethod laplace\nlikelihood probit\nkernel bias\ndim 1\n"
                 "hyperparameters 1\nlog_v0 0\n",
                 "wrongname.txt:7: expected 'log_bias");

    /* a model ends with the newline of its last line: cut inside its last
     * number, the rest still reads as numbers */
    expect_error("cut.txt",
                 "gpc-model 1\nmethod laplace\nlikelihood probit\nkernel bias\ndim 1\n"
                 "hyperparameters 1\nlog_bias 0\nfit none\nlog_evidence -1\ntraining 1\n"
                 "1 0.5 0.12",
                 "cut.txt:11: the last line has no end of line");
    expect_error("cut-comment.txt",
                 "gpc-model 1\nmethod laplace\nlikelihood probit\nkernel bias\ndim 1\n"
                 "hyperparameters 1\nlog_bias 0\nfit none\nlog_evidence -1\ntraining 1\n"
                 "1 0.5 0.12\n# end",
                 "cut-comment.txt:12: the last line has no end of line");
    /* a gram term's training block as gpc-fit takes it: symmetric within
     * 1e-10 of its largest diagonal value, the diagonal repeated in front */
    const char *gram_head = "gpc-model 1\nmethod laplace\nlikelihood logistic\nkernel gram@1-3\n"
                            "dim 3\nhyperparameters 1\nlog_v 0\nfit none\nlog_evidence -1\n"
                            "training 2\n";
    char text[512];
    snprintf(text, sizeof text, "%s1 0.2 1 1 0.5\n-1 -0.2 1 0.5000000000001 1\n", gram_head);
    write_file(path("gram.txt"), text);
    gpc_model *g = NULL;
    st = gpc_model_read(path("gram.txt"), &g);
    TEST_OK(st == GPC_OK, "gram: a block symmetric within the fit's tolerance reads (%s)",
            st ? gpc_errmsg() : "ok");
    gpc_model_free(g);
    snprintf(text, sizeof text, "%s1 0.2 1 1 0.5\n-1 -0.2 1 0.4 1\n", gram_head);
    expect_error("gram-asym.txt", text, "gram-asym.txt: gram term 1: the training Gram matrix "
                 "is not symmetric: case 2 to 1 is 0.40000000000000002, case 1 to 2 is 0.5");
    snprintf(text, sizeof text, "%s1 0.2 1 1 0.5\n-1 -0.2 2 0.5 1\n", gram_head);
    expect_error("gram-diag.txt", text, "gram-diag.txt: gram term 1: training case 2's "
                 "similarity to itself is 2 in column 1");

    test_multiclass_round_trip(r, GPC_METHOD_SOFTMAX, GPC_LIK_SOFTMAX, "se", "mc1.txt");
    test_multiclass_round_trip(r, GPC_METHOD_SOFTMAX, GPC_LIK_SOFTMAX, "ard:per-class=3",
                               "mc2.txt");
    test_multiclass_round_trip(r, GPC_METHOD_EP_OVR, GPC_LIK_PROBIT, "se:per-class=3",
                               "mc3.txt");
    test_multiclass_round_trip(r, GPC_METHOD_LAPLACE_OVR, GPC_LIK_LOGISTIC, "se", "mc4.txt");
    expect_error("noclasses.txt",
                 "gpc-model 1\nmethod laplace\nlikelihood softmax\nkernel bias\ndim 1\n",
                 "noclasses.txt:4: a multiclass model needs its 'classes' line");
    expect_error("mclabel.txt",
                 "gpc-model 1\nmethod laplace\nlikelihood softmax\nclasses a b c\nkernel bias\n"
                 "dim 1\nhyperparameters 1\nlog_bias 0\nfit none\nlog_evidence -1\ntraining 1\n"
                 "4 0 0 0 0\n",
                 "mclabel.txt:12: label must be a class number from 1 to 3");
    expect_error("ovr-binary.txt",
                 "gpc-model 1\nmethod ep-ovr\nlikelihood softmax\n",
                 "ovr-binary.txt:3:");

    gpc_model_free(m);
    gpc_model_free(b);
    gsl_matrix_free(Xs);
    gpc_prediction_free(all);
    gpc_prediction_free(one);
    gsl_rng_free(r);
    const char *names[] = {"m.txt", "empty.txt", "other.txt", "v9.txt", "badlik.txt",
                           "short.txt", "badlabel.txt", "wrongname.txt", "noclasses.txt",
                           "mclabel.txt", "ovr-binary.txt", "cut.txt", "cut-comment.txt",
                           "gram.txt", "gram-asym.txt", "gram-diag.txt"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unlink(path(names[i]));
    rmdir(dir);
    return tap_done();
}
