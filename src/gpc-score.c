/* gpc-score — test error and mean log predictive probability of binary
 * predictions against the true labels. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "matio.h"
#include "model.h"

static void usage(void)
{
    printf("Usage: %s [OPTION]... PRED Y\n"
           "Compare predictions PRED (as written by gpc-predict; column 1 is p(y=+1|x))\n"
           "with the true labels Y (two classes, numbers or words; p is that of the later\n"
           "class, the positive one of -1/+1 or 0/1) and print one line:\n"
           "  errors E of N (R%%), mean log predictive probability M\n"
           "A case counts as an error when p(y=+1|x) >= 1/2 and y = -1 or p < 1/2 and\n"
           "y = +1.  M is the mean over cases of log p(y_i | x_i) (natural log).\n"
           "\n"
           "  -m, --model=FILE  the labels are of this model's classes, which need not\n"
           "                    all be present (a test set of one class of words)\n"
           "      --column=N    read p(y=+1|x) from column N of PRED (default 1)\n"
           "  -t, --table       print 'errors cases rate mlpp' as numbers instead\n"
           "  -q, --quiet       no messages except errors\n"
           "  -v, --verbose     more messages\n"
           "  -h, --help        show this help and exit\n"
           "  -V, --version     show the version and exit\n"
           "\n"
           "Exit status: 0 success, 2 usage error, 3 input or output error.\n",
           gpc_progname());
    exit(0);
}

enum { OPT_COLUMN = 256 };

static const struct option long_options[] = {
    {"model", required_argument, NULL, 'm'},
    {"column", required_argument, NULL, OPT_COLUMN},
    {"table", no_argument, NULL, 't'},
    GPC_CLI_COMMON_OPTIONS};

int main(int argc, char **argv)
{
    long col = 1;
    const char *model_path = NULL;
    int table = 0, c;
    gpc_format unused;
    gpc_cli_init(argc, argv);
    while ((c = getopt_long(argc, argv, "m:tvqhV", long_options, NULL)) != -1) {
        if (gpc_cli_common(c, optarg, &unused))
            continue;
        switch (c) {
        case OPT_COLUMN: col = gpc_cli_long("--column", optarg, 1, 1000000); break;
        case 'm': model_path = optarg; break;
        case 't': table = 1; break;
        case 'h': usage();
        }
    }
    if (argc - optind != 2)
        gpc_cli_usage("expected two files, the predictions and the labels");
    const char *ppath = argv[optind], *ypath = argv[optind + 1];
    gpc_cli_stdin_claim("the predictions", ppath);
    gpc_cli_stdin_claim("the labels", ypath);
    gpc_cli_stdin_claim("the model (-m)", model_path);
    gsl_matrix *P = gpc_cli_read_matrix(ppath, 0, NULL);
    /* a test set may hold one class only, when its coding or the model says
     * which */
    gpc_labels *labels;
    if (model_path) {
        gpc_model *m;
        gpc_cli_check(gpc_model_read(model_path, &m));
        char *names[2] = {(char *)gpc_model_class(m, 0), (char *)gpc_model_class(m, 1)};
        int st = gpc_labels_read_classes(ypath, names, 2, &labels);
        gpc_model_free(m);
        gpc_cli_check(st);
    } else {
        labels = gpc_cli_read_binary_labels(ypath);
    }
    gsl_vector *y = gpc_labels_binary(labels);
    gpc_labels_free(labels);
    if ((size_t)col > P->size2)
        gpc_die(GPC_EINPUT, "%s has %zu columns, no column %ld", gpc_cli_name(ppath), P->size2,
                col);
    if (y->size != P->size1)
        gpc_die(GPC_EINPUT, "%s has %zu labels but %s has %zu rows; they must match",
                gpc_cli_name(ypath), y->size, gpc_cli_name(ppath), P->size1);
    size_t n = P->size1, errors = 0;
    double sum_log = 0.0;
    for (size_t i = 0; i < n; i++) {
        double p = gsl_matrix_get(P, i, (size_t)col - 1), yi = gsl_vector_get(y, i);
        if (p < 0.0 || p > 1.0)
            gpc_die(GPC_EINPUT, "%s: row %zu: %g is not a probability", gpc_cli_name(ppath),
                    i + 1, p);
        errors += (p >= 0.5) != (yi > 0);
        sum_log += log(yi > 0 ? p : 1.0 - p);
    }
    double rate = (double)errors / n, mlpp = sum_log / n;
    if (table)
        printf("%zu %zu %.17g %.17g\n", errors, n, rate, mlpp);
    else
        printf("errors %zu of %zu (%.1f%%), mean log predictive probability %.4f\n", errors, n,
               100.0 * rate, mlpp);
    if (fflush(stdout) != 0 || ferror(stdout))
        gpc_die(GPC_EINPUT, "<stdout>: write error");
    gsl_matrix_free(P);
    gsl_vector_free(y);
    return 0;
}
