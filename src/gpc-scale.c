/* gpc-scale — standardise inputs to zero mean and unit variance per column,
 * with statistics saved from the training set and applied to the test set. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cli.h"
#include "err.h"
#include "matio.h"

static void usage(void)
{
    printf("Usage: %s [OPTION]... [X]\n"
           "Standardise each column of X (default standard input): subtract its mean and\n"
           "divide by its sample standard deviation (n - 1 denominator).  Columns that\n"
           "are constant are only centred.\n"
           "\n"
           "  -s, --save=FILE      compute the statistics from X and save them to FILE\n"
           "                       (a 2-row matrix: means, then standard deviations)\n"
           "  -r, --restore=FILE   apply statistics saved earlier instead (e.g. to the\n"
           "                       test set, with the training set's statistics)\n"
           "  -o, --output=FILE    write here (default: standard output)\n"
           "  -F, --format=FMT     output format: text (default) or npy\n"
           "  -q, --quiet          no warnings\n"
           "  -v, --verbose        more messages\n"
           "  -h, --help           show this help and exit\n"
           "  -V, --version        show the version and exit\n"
           "\n"
           "Exit status: 0 success, 2 usage error, 3 input or output error.\n",
           gpc_progname());
    exit(0);
}

static const struct option long_options[] = {
    {"save", required_argument, NULL, 's'},
    {"restore", required_argument, NULL, 'r'},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'F'},
    GPC_CLI_COMMON_OPTIONS};

/* Means (row 0) and sample standard deviations (row 1) of the columns. */
static gsl_matrix *column_stats(const gsl_matrix *X)
{
    size_t n = X->size1, d = X->size2;
    gsl_matrix *s = gpc_matrix_calloc(2, d);
    for (size_t l = 0; l < d; l++) {
        double mean = 0.0, ss = 0.0;
        for (size_t i = 0; i < n; i++)
            mean += gsl_matrix_get(X, i, l);
        mean /= n;
        for (size_t i = 0; i < n; i++) {
            double e = gsl_matrix_get(X, i, l) - mean;
            ss += e * e;
        }
        gsl_matrix_set(s, 0, l, mean);
        gsl_matrix_set(s, 1, l, n > 1 ? sqrt(ss / (n - 1)) : 0.0);
    }
    return s;
}

int main(int argc, char **argv)
{
    const char *save = NULL, *restore = NULL, *out = "-";
    gpc_format fmt = GPC_FMT_TEXT;
    int c;
    gpc_cli_init(argc, argv);
    while ((c = getopt_long(argc, argv, "s:r:o:F:vqhV", long_options, NULL)) != -1) {
        if (gpc_cli_common(c, optarg, &fmt))
            continue;
        switch (c) {
        case 's': save = optarg; break;
        case 'r': restore = optarg; break;
        case 'o': out = optarg; break;
        case 'h': usage();
        }
    }
    if (argc - optind > 1)
        gpc_cli_usage("expected at most one input file");
    if (save && restore)
        gpc_cli_usage("--save and --restore cannot be combined");
    const char *xpath = optind < argc ? argv[optind] : "-";
    if (restore && strcmp(restore, "-") == 0 && strcmp(xpath, "-") == 0)
        gpc_cli_usage("the statistics and the inputs cannot both be standard input");
    if (save && strcmp(save, "-") == 0 && strcmp(out, "-") == 0)
        gpc_cli_usage("--save - needs the output elsewhere (-o FILE)");

    gsl_matrix *X = gpc_cli_read_matrix(xpath, 0, NULL), *stats;
    if (restore) {
        stats = gpc_cli_read_matrix(restore, 0, NULL);
        if (stats->size1 != 2 || stats->size2 != X->size2)
            gpc_die(GPC_EINPUT, "%s: expected 2 rows of %zu statistics (means, standard "
                    "deviations) for %s, found %zu x %zu", gpc_cli_name(restore), X->size2,
                    gpc_cli_name(xpath),
                    stats->size1, stats->size2);
        for (size_t l = 0; l < X->size2; l++)
            if (gsl_matrix_get(stats, 1, l) < 0.0)
                gpc_die(GPC_EINPUT, "%s: standard deviation of column %zu is negative; save "
                        "statistics with gpc-scale --save", gpc_cli_name(restore), l + 1);
    } else {
        stats = column_stats(X);
    }
    for (size_t l = 0; l < X->size2; l++) {
        double mean = gsl_matrix_get(stats, 0, l), sd = gsl_matrix_get(stats, 1, l);
        /* a constant column's computed sd is rounding noise, not a scale */
        if (!(sd > 1e-12 * fabs(mean))) {
            if (!restore)
                gpc_info(1, "column %zu is constant: centred, not scaled", l + 1);
            sd = 1.0;
        }
        for (size_t i = 0; i < X->size1; i++)
            gsl_matrix_set(X, i, l, (gsl_matrix_get(X, i, l) - mean) / sd);
    }
    if (save)
        gpc_cli_write_matrix(save, stats, GPC_FMT_TEXT);
    gpc_cli_write_matrix(out, X, fmt);
    gsl_matrix_free(X);
    gsl_matrix_free(stats);
    return 0;
}
