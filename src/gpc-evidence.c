/* gpc-evidence — the approximate log marginal likelihood (Laplace or EP)
 * and its gradient with respect to the log hyperparameters, at one
 * hyperparameter vector or at every row of a grid of them. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/progress.h"
#include "cli/cli.h"
#include "hyper/evidence.h"
#include "io/colnames.h"
#include "io/matio.h"

static void usage(void)
{
    printf("Usage: %s [OPTION]... X [Y]\n"
           "Print the approximate log evidence log q(Y | X, theta) of a GP classifier\n"
           "(binary, or multiclass for labels of three or more classes) and its gradient\n"
           "with respect to the log hyperparameters theta: one row per hyperparameter\n"
           "vector, log evidence first, then the gradient in the kernel's parameter order\n"
           "(see gpc-kernel --list).  A LIBSVM file X ('label index:value ...', see\n"
           "gpc-formats(5)) holds the labels too: leave Y out.\n"
           "\n"
           "  -k, --kernel=SPEC        covariance function (default ard)\n"
           GPC_CLI_MULTICLASS_HELP
           GPC_CLI_PER_CLASS_HELP
           "  -l, --likelihood=NAME    logistic (default with laplace and two classes),\n"
           "                           probit (default with ep), step (ep only), softmax\n"
           "                           (laplace; the default with three or more classes)\n"
           "                           or mprobit (multinomial probit, vb)\n"
           "  -M, --method=NAME        laplace (default), ep (expectation propagation),\n"
           "                           tap (the same as ep: adaptive TAP), vb (variational\n"
           "                           Bayes, multinomial probit: its lower bound) or svgp\n"
           "                           (sparse variational, two classes: its lower bound\n"
           "                           with q at its optimum and the inducing inputs fixed)\n"
           "      --inducing=M         with svgp: the number of inducing inputs, chosen among\n"
           "                           the cases by k-means (default 200, or all cases if\n"
           "                           fewer), the same for every row of --grid\n"
           "      --inducing-inputs=FILE  with svgp: these inducing inputs instead, a matrix\n"
           "                           of the inputs' columns or an svgp model's (for the\n"
           "                           bound of a fitted model at other hyperparameters)\n"
           "  -S, --seed=N             with svgp: the seed of that choice (default 1)\n"
           "      --damping=D          with ep: damped site updates, 0 < D <= 1 (default 1;\n"
           "                           nested EP, with three or more classes: 0.8)\n"
           "      --label-noise=EPS    with ep: each label flipped with probability EPS,\n"
           "                           0 <= EPS < 0.5 (default 0)\n"
           "      --tol=T              with ep: stop when no site moves by more than T,\n"
           "                           relative; with vb: when no sweep would move a latent\n"
           "                           mean by more than T (default 1e-9 for both); with\n"
           "                           svgp: when a step raises the bound by at most T,\n"
           "                           relative (default 1e-10)\n"
           "      --objective=WHAT     with vb: laplace (default; the Laplace evidence of the\n"
           "                           multinomial probit model at the variational mode) or\n"
           "                           bound (the variational lower bound)\n"
           "  -p, --params=LIST        hyperparameters: name=value,... or all values\n"
           "  -H, --params-file=FILE   hyperparameters from 'name value' lines\n"
           "  -g, --grid=FILE          a matrix with one hyperparameter vector per row;\n"
           "                           one output row each\n"
           "  -n, --no-gradient        print the log evidence only\n"
           "  -o, --output=FILE        write here (default: standard output)\n"
           "  -F, --format=FMT         output format: text (default) or npy\n"
           GPC_CLI_HEADER_HELP
           GPC_CLI_LABEL_COLUMN_HELP
           GPC_CLI_PROCESS_GRID_HELP
           "  -q, --quiet              no progress lines\n"
           "  -v, --verbose            more messages; twice, a line per nested EP run;\n"
           "                           three times, its sweeps\n"
           "  -h, --help               show this help and exit\n"
           "  -V, --version            show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 numerical failure, 2 usage error, 3 input or output\n"
           "error.\n",
           gpc_progname());
    gpc_cli_exit_written(); /* exit 0, or 3 if the help could not be written */
}

enum { OPT_DAMPING = 256, OPT_LABEL_NOISE, OPT_TOL, OPT_OBJECTIVE, OPT_PER_CLASS, OPT_MULTICLASS,
       OPT_INDUCING, OPT_INDUCING_INPUTS };

static const struct option long_options[] = {
    {"kernel", required_argument, NULL, 'k'},
    {"likelihood", required_argument, NULL, 'l'},
    {"method", required_argument, NULL, 'M'},
    {"damping", required_argument, NULL, OPT_DAMPING},
    {"label-noise", required_argument, NULL, OPT_LABEL_NOISE},
    {"tol", required_argument, NULL, OPT_TOL},
    {"objective", required_argument, NULL, OPT_OBJECTIVE},
    {"per-class", no_argument, NULL, OPT_PER_CLASS},
    {"multiclass", required_argument, NULL, OPT_MULTICLASS},
    {"inducing", required_argument, NULL, OPT_INDUCING},
    {"inducing-inputs", required_argument, NULL, OPT_INDUCING_INPUTS},
    {"seed", required_argument, NULL, 'S'},
    {"params", required_argument, NULL, 'p'},
    {"params-file", required_argument, NULL, 'H'},
    {"grid", required_argument, NULL, 'g'},
    {"no-gradient", no_argument, NULL, 'n'},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'F'},
    GPC_CLI_LABEL_COLUMN_OPTION,
    GPC_CLI_PROCESS_GRID_OPTIONS,
    GPC_CLI_COMMON_OPTIONS};

int main(int argc, char **argv)
{
    const char *multiclass = NULL;
    const char *kspec = "ard", *likname = NULL, *mname = "laplace", *params = NULL, *objective = NULL;
    const char *params_file = NULL;
    const char *grid_path = NULL, *out = "-";
    int no_grad = 0, tol_set = 0, per_class = 0, c;
    double damping = NAN, label_noise = 0.0, tol = 0.0;
    size_t inducing = 0; /* 0: the method's default */
    const char *inducing_path = NULL;
    unsigned long seed = 1;
    gpc_format fmt = GPC_FMT_TEXT;
    gpc_cli_init(argc, argv);
    while ((c = getopt_long(argc, argv, "k:l:M:p:H:g:no:F:S:vqhV", long_options, NULL)) != -1) {
        if (gpc_cli_common(c, optarg, &fmt))
            continue;
        switch (c) {
        case 'k': kspec = optarg; break;
        case OPT_PER_CLASS: per_class = 1; break;
        case OPT_MULTICLASS: multiclass = optarg; break;
        case OPT_INDUCING_INPUTS: inducing_path = optarg; break;
        case OPT_INDUCING: inducing = (size_t)gpc_cli_long("--inducing", optarg, 1, 1000000000); break;
        case 'S': seed = (unsigned long)gpc_cli_long("--seed", optarg, 0, 4294967295L); break;
        case 'l': likname = optarg; break;
        case 'M': mname = optarg; break;
        case OPT_DAMPING: damping = gpc_cli_double("--damping", optarg); break;
        case OPT_LABEL_NOISE: label_noise = gpc_cli_double("--label-noise", optarg); break;
        case OPT_TOL: tol = gpc_cli_double("--tol", optarg), tol_set = 1; break;
        case OPT_OBJECTIVE: objective = optarg; break;
        case 'p': params = optarg; break;
        case 'H': params_file = optarg; break;
        case 'g': grid_path = optarg; break;
        case 'n': no_grad = 1; break;
        case 'o': out = optarg; break;
        case 'h': usage();
        }
    }
    if (grid_path && (params || params_file))
        gpc_cli_usage("give hyperparameters either with --grid or with --params/--params-file");
    gpc_method method;
    gpc_lik lik;
    gpc_cli_method(mname, likname, &method, &lik);
    if (!gpc_method_get(method)->has_evidence)
        gpc_cli_usage("%s gives no evidence; use -M ep (or tap)", gpc_method_get(method)->title);
    gpc_cli_stdin_claim("-H", params_file);
    gpc_cli_stdin_claim("--grid", grid_path);
    gpc_cli_stdin_claim("--inducing-inputs", inducing_path);
    gpc_cli_stdin_claim_training(argc, argv);
    gpc_output *output = gpc_cli_output(out);
    gsl_matrix *X;
    gpc_labels *labels;
    char **names;
    gpc_cli_read_training(argc, argv, &X, &names, &labels);
    gsl_vector *y = gpc_cli_class_vector(labels, likname != NULL, multiclass, &method, &lik);
    gpc_kernel *k = gpc_cli_class_kernel(kspec, per_class, labels, method, X, names,
                                         argv[optind], params_file, params);
    size_t p = gpc_kernel_nparams(k);
    gsl_matrix *grid;
    if (grid_path) {
        grid = gpc_cli_read_matrix(grid_path, p, "the kernel's hyperparameter vector");
    } else {
        grid = gpc_matrix_alloc(1, p);
        memcpy(grid->data, gpc_kernel_params(k), p * sizeof(double));
    }

    gpc_evidence *ev = gpc_cli_evidence(k, X, y, labels->nclasses, lik, method, !no_grad);
    gpc_cli_damping(ev, damping);
    gpc_cli_inducing(ev, k, inducing, inducing_path, names, seed);
    gpc_colnames_free(names);
    gpc_cli_label_noise(ev, label_noise);
    if (tol_set && gpc_evidence_set_tol(ev, tol) != GPC_OK)
        gpc_cli_usage("%s", gpc_errmsg());
    gpc_cli_objective(ev, objective, 0);
    gsl_matrix *res = gpc_matrix_alloc(grid->size1, no_grad ? 1 : 1 + p);
    gpc_progress clock;
    gpc_progress_start(&clock, "hyperparameter vector", 0, (long)grid->size1,
                       gpc_progress_clock());
    for (size_t r = 0; r < grid->size1; r++) {
        double *row = res->data + r * res->tda;
        int st = gpc_evidence_eval(ev, grid->data + r * grid->tda, &row[0],
                                   no_grad ? NULL : row + 1);
        if (st != GPC_OK && grid_path)
            gpc_die(st, "%s: row %zu: %s", grid_path, r + 1, gpc_errmsg());
        gpc_cli_check(st);
        char line[160];
        if (grid->size1 > 1 && (r + 1) % 100 == 0)
            gpc_info(1, "%s", gpc_progress_format(&clock, (long)(r + 1), gpc_progress_clock(),
                                                  line, sizeof line));
    }
    gpc_cli_write_matrix(output, res, fmt);
    gpc_evidence_free(ev);
    gpc_kernel_free(k);
    gsl_matrix_free(grid);
    gsl_matrix_free(res);
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gpc_labels_free(labels);
    return 0;
}
