/* gpc-kernel — covariance matrices K(X, X), cross-covariances K(X, XS),
 * diagonals and hyperparameter derivatives for a kernel spec. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#include "base/alloc.h"
#include "base/err.h"
#include "cli/cli.h"
#include "io/colnames.h"
#include "io/matio.h"
#include "kernels/kernel.h"

static void usage(void)
{
    printf("Usage: %s [OPTION]... X [XS]\n"
           "Write the covariance matrix K(X, X) of the rows of X (jitter included), or\n"
           "with XS the cross-covariance K(X, XS) (no jitter).\n"
           "\n"
           "  -k, --kernel=SPEC        covariance function (default ard); terms ard, se,\n"
           "                           matern12, matern32, matern52, matern12ard,\n"
           "                           matern32ard, matern52ard, rq, rqard, periodic,\n"
           "                           periodicard, poly<P> (P = 1..32), linear, nn,\n"
           "                           bias, jitter, gram (a precomputed Gram matrix in\n"
           "                           the inputs) joined by '+' and '*' (binding\n"
           "                           tighter), with parentheses, each optionally on\n"
           "                           columns: 'ard@1-3*periodic@4+linear@5'; a\n"
           "                           clause ':simplex' weights a sum of single terms\n"
           "                           on the simplex; ':per-class=C' gives C classes\n"
           "                           their own hyperparameters (--list only); see\n"
           "                           KERNELS in gpc-kernel(1)\n"
           "  -p, --params=LIST        hyperparameters: name=value,... or all values\n"
           "  -H, --params-file=FILE   hyperparameters from 'name value' lines\n"
           "  -d, --diag               only the diagonal k(x, x) of each row, as a column\n"
           "  -D, --grad=NAME          dK(X, X) / d NAME instead of K\n"
           "  -C, --cholesky           the lower Cholesky factor L of K(X, X), K = L L'\n"
           "                           (e.g. to draw from the prior); fails with status 1\n"
           "                           if K is not positive definite\n"
           "  -L, --list               list the hyperparameters and their values, and exit\n"
           "  -o, --output=FILE        write here (default: standard output)\n"
           "  -F, --format=FMT         output format: text (default) or npy\n"
           GPC_CLI_HEADER_HELP
           "  -q, --quiet              no messages except errors\n"
           "  -v, --verbose            more messages\n"
           "  -h, --help               show this help and exit\n"
           "  -V, --version            show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 K not positive definite (--cholesky), 2 usage\n"
           "error, 3 input or output error.\n",
           gpc_progname());
    gpc_cli_exit_written(); /* exit 0, or 3 if the help could not be written */
}

/* Replace K by its lower Cholesky factor (zeros above the diagonal). */
static void cholesky_lower(gsl_matrix *K, const char *kspec)
{
    if (gsl_linalg_cholesky_decomp1(K) != GSL_SUCCESS)
        gpc_die(GPC_ENUM, "K is not positive definite (e.g. repeated rows without a jitter "
                "term); try '-k %s+jitter' or a larger log_jitter", kspec);
    for (size_t i = 0; i < K->size1; i++)
        for (size_t j = i + 1; j < K->size2; j++)
            gsl_matrix_set(K, i, j, 0.0);
}

static const struct option long_options[] = {
    {"kernel", required_argument, NULL, 'k'},
    {"params", required_argument, NULL, 'p'},
    {"params-file", required_argument, NULL, 'H'},
    {"diag", no_argument, NULL, 'd'},
    {"grad", required_argument, NULL, 'D'},
    {"list", no_argument, NULL, 'L'},
    {"cholesky", no_argument, NULL, 'C'},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'F'},
    GPC_CLI_COMMON_OPTIONS};

int main(int argc, char **argv)
{
    const char *kspec = "ard", *params = NULL, *params_file = NULL, *grad = NULL, *out = "-";
    int diag = 0, list = 0, chol = 0, c;
    gpc_format fmt = GPC_FMT_TEXT;
    gpc_cli_init(argc, argv);
    while ((c = getopt_long(argc, argv, "k:p:H:dD:CLo:F:vqhV", long_options, NULL)) != -1) {
        if (gpc_cli_common(c, optarg, &fmt))
            continue;
        switch (c) {
        case 'k': kspec = optarg; break;
        case 'p': params = optarg; break;
        case 'H': params_file = optarg; break;
        case 'd': diag = 1; break;
        case 'D': grad = optarg; break;
        case 'L': list = 1; break;
        case 'C': chol = 1; break;
        case 'o': out = optarg; break;
        case 'h': usage();
        }
    }
    int nfiles = argc - optind;
    if (nfiles < 1 || nfiles > 2)
        gpc_cli_usage("expected the inputs X and optionally XS");
    if ((diag || grad || chol || list) && nfiles == 2)
        gpc_cli_usage("--diag, --grad, --cholesky and --list take only X");
    if (diag + !!grad + chol + list > 1)
        gpc_cli_usage("--diag, --grad, --cholesky and --list cannot be combined");
    const char *xpath = argv[optind];
    gpc_cli_stdin_claim("-H", params_file);
    gpc_cli_stdin_claim("X", xpath);
    if (nfiles == 2)
        gpc_cli_stdin_claim("XS", argv[optind + 1]);
    gpc_output *output = gpc_cli_output(out);

    char **names;
    gsl_matrix *X = gpc_cli_read_inputs(xpath, &names);
    gpc_kernel *k = gpc_cli_kernel(kspec, X->size2, names, xpath, params_file, params);
    if (list) {
        gpc_cli_params_list(k, names, output);
        gpc_cli_check(gpc_output_commit(output));
        gpc_colnames_free(names);
        gpc_kernel_free(k);
        gsl_matrix_free(X);
        return 0;
    }
    /* one matrix per class: each is the base spec with that class's values */
    if (gpc_kernel_copies(k) > 1)
        gpc_cli_usage("kernel '%s' has one covariance per class; give the spec without "
                      ":per-class= and one class's hyperparameters (--list shows them)",
                      gpc_kernel_spec(k));
    long j = grad ? gpc_kernel_param_index(k, grad) : -1;
    if (grad && j < 0)
        gpc_cli_usage("--grad: kernel '%s' has no hyperparameter '%s' (see --list)",
                      gpc_kernel_spec(k), grad);

    if (!diag)
        gpc_cli_check(gpc_kernel_check_train(k, X));
    size_t n = X->size1;
    gsl_matrix *res;
    if (nfiles == 2) {
        /* XS numbered as X was, as gpc-predict reads a model's inputs */
        gpc_cli_model_base(gpc_cli_training_zero_based());
        gsl_matrix *Xs = gpc_cli_read_inputs_for(argv[optind + 1], names, X->size2, xpath);
        res = gpc_matrix_alloc(n, Xs->size1);
        gpc_kernel_cross(k, X, Xs, res);
        gsl_matrix_free(Xs);
    } else if (diag) {
        res = gpc_matrix_alloc(n, 1);
        gsl_vector_view d = gsl_matrix_column(res, 0);
        gpc_kernel_diag(k, X, &d.vector);
    } else {
        res = gpc_matrix_alloc(n, n);
        if (grad)
            gpc_kernel_grad_matrix(k, X, (size_t)j, res);
        else
            gpc_kernel_matrix(k, X, res);
        if (chol)
            cholesky_lower(res, kspec);
    }
    for (size_t i = 0; i < res->size1 * res->size2; i++)
        if (!isfinite(res->data[i]))
            gpc_die(GPC_ENUM, "the kernel's values are not finite at these hyperparameters "
                    "(exp of a log beyond about +-700 overflows or underflows: an amplitude, "
                    "a weight w, a period or alpha out of range)");
    gpc_cli_write_matrix(output, res, fmt);
    gsl_matrix_free(res);
    gsl_matrix_free(X);
    gpc_colnames_free(names);
    gpc_kernel_free(k);
    return 0;
}
