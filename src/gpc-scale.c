/* gpc-scale — standardise inputs to zero mean and unit variance per column,
 * with statistics saved from the training set and applied to the test set. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "cli/cli.h"
#include "io/colnames.h"
#include "io/matio.h"

/* Constant columns named one by one; the rest are counted, for a wide
 * sparse file has one for every index its rows leave out. */
#define CONSTANT_NAMED 5

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
           GPC_CLI_HEADER_HELP
           "  -q, --quiet          no warnings\n"
           "  -v, --verbose        more messages\n"
           "  -h, --help           show this help and exit\n"
           "  -V, --version        show the version and exit\n"
           "\n"
           "Exit status: 0 success, 2 usage error, 3 input or output error.\n",
           gpc_progname());
    gpc_cli_exit_written(); /* exit 0, or 3 if the help could not be written */
}

static const struct option long_options[] = {
    {"save", required_argument, NULL, 's'},
    {"restore", required_argument, NULL, 'r'},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'F'},
    GPC_CLI_COMMON_OPTIONS};

/* Means (row 0) and sample standard deviations (row 1) of the columns. */
/* Mean and sample sd of column l, with the values divided by scale first
 * (and the results multiplied back). */
static void mean_sd(const gsl_matrix *X, size_t l, double scale, double *mean, double *sd)
{
    size_t n = X->size1;
    double m = 0.0, ss = 0.0;
    for (size_t i = 0; i < n; i++)
        m += gsl_matrix_get(X, i, l) / scale;
    m /= n;
    for (size_t i = 0; i < n; i++) {
        double e = gsl_matrix_get(X, i, l) / scale - m;
        ss += e * e;
    }
    *mean = m * scale;
    *sd = n > 1 ? scale * sqrt(ss / (n - 1)) : 0.0;
}

/* Largest magnitude in column l. */
static double column_max(const gsl_matrix *X, size_t l)
{
    double s = 0.0;
    for (size_t i = 0; i < X->size1; i++)
        s = fmax(s, fabs(gsl_matrix_get(X, i, l)));
    return s;
}

static gsl_matrix *column_stats(const gsl_matrix *X, const char *xname)
{
    gsl_matrix *s = gpc_matrix_calloc(2, X->size2);
    for (size_t l = 0; l < X->size2; l++) {
        double mean, sd;
        mean_sd(X, l, 1.0, &mean, &sd);
        /* sums of values near the top of the double range overflow: sum
         * them divided by the largest instead (plain sums stay exact for
         * the rest) */
        if (!isfinite(mean) || !isfinite(sd))
            mean_sd(X, l, column_max(X, l), &mean, &sd);
        if (!isfinite(sd))
            gpc_die(GPC_EINPUT, "%s: column %zu: the values span more than the double range "
                    "(their standard deviation overflows); rescale the column first", xname,
                    l + 1);
        gsl_matrix_set(s, 0, l, mean);
        gsl_matrix_set(s, 1, l, sd);
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
    gpc_cli_stdin_claim("the statistics (-r)", restore);
    gpc_cli_stdin_claim("the inputs", xpath);
    if (save && strcmp(save, "-") == 0 && strcmp(out, "-") == 0)
        gpc_cli_usage("--save - needs the output elsewhere (-o FILE)");
    gpc_output *save_out = save ? gpc_cli_output(save) : NULL, *output = gpc_cli_output(out);

    char **names;
    gsl_matrix *X = gpc_cli_read_inputs(xpath, &names), *stats;
    if (restore) {
        /* statistics saved from named columns are matched to X's by name */
        stats = names ? gpc_cli_read_inputs_for(restore, names, X->size2, "the statistics")
                      : gpc_cli_read_matrix(restore, 0, NULL);
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
        stats = column_stats(X, gpc_cli_name(xpath));
    }
    size_t constant = 0;
    for (size_t l = 0; l < X->size2; l++) {
        double mean = gsl_matrix_get(stats, 0, l), sd = gsl_matrix_get(stats, 1, l);
        /* a constant column's computed sd is rounding noise, not a scale */
        if (!(sd > 1e-12 * fabs(mean))) {
            if (!restore && ++constant <= CONSTANT_NAMED)
                gpc_info(1, "column %zu is constant: centred, not scaled", l + 1);
            sd = 1.0;
        }
        for (size_t i = 0; i < X->size1; i++) {
            double z = (gsl_matrix_get(X, i, l) - mean) / sd;
            if (!isfinite(z))
                gpc_die(GPC_EINPUT, "%s: row %zu, column %zu: the scaled value overflows "
                        "(mean %g, sd %g); scale statistics that fit the data", gpc_cli_name(xpath),
                        i + 1, l + 1, mean, sd);
            gsl_matrix_set(X, i, l, z);
        }
    }
    if (constant > CONSTANT_NAMED)
        gpc_info(1, "and %zu more columns are constant: centred, not scaled",
                 constant - CONSTANT_NAMED);
    /* both written before either is committed, so a failure leaves neither */
    if (save_out)
        gpc_cli_check(gpc_matrix_write_named(gpc_output_file(save_out),
                                             gpc_output_name(save_out), stats, GPC_FMT_TEXT,
                                             names));
    /* named columns stay named: text output is then CSV with their header */
    gpc_cli_check(gpc_matrix_write_named(gpc_output_file(output), gpc_output_name(output), X,
                                         fmt, names));
    gpc_colnames_free(names);
    if (save_out)
        gpc_cli_check(gpc_output_commit(save_out));
    gpc_cli_check(gpc_output_commit(output));
    gsl_matrix_free(X);
    gsl_matrix_free(stats);
    return 0;
}
