/* gpc-predict — class probabilities, latent means and variances and labels
 * for new inputs from a model written by gpc-fit. */
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
    printf("Usage: %s -m MODEL [OPTION]... [XS]\n"
           "Predict for the inputs XS (one case per row; default standard input) with a\n"
           "model from gpc-fit.  Writes one row per case with the columns chosen by -c.\n"
           "\n"
           "  -m, --model=FILE      the model (required)\n"
           "  -c, --columns=LIST    comma-separated, from: p (p(y=+1|x), averaged over the\n"
           "                        latent Gaussian), plugin (the likelihood at the latent\n"
           "                        mean), mean, var (latent mean and variance), label\n"
           "                        (+1 if p >= 1/2, else -1); default p,mean,var,label\n"
           "      --plugin          use the plug-in probability for p and label\n"
           "  -o, --output=FILE     write here (default: standard output)\n"
           "  -F, --format=FMT      output format: text (default) or npy\n"
           "  -q, --quiet           no messages except errors\n"
           "  -v, --verbose         more messages\n"
           "  -h, --help            show this help and exit\n"
           "  -V, --version         show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 numerical failure, 2 usage error, 3 input or output\n"
           "error.\n",
           gpc_progname());
    exit(0);
}

enum { OPT_PLUGIN = 256 };

static const struct option long_options[] = {
    {"model", required_argument, NULL, 'm'},
    {"columns", required_argument, NULL, 'c'},
    {"plugin", no_argument, NULL, OPT_PLUGIN},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'F'},
    GPC_CLI_COMMON_OPTIONS};

typedef enum { COL_P, COL_PLUGIN, COL_MEAN, COL_VAR, COL_LABEL } column;
static const char *const column_names[] = {"p", "plugin", "mean", "var", "label"};
#define MAX_COLUMNS 16

static size_t parse_columns(const char *list, column *cols)
{
    char *copy = strdup(list), *save = NULL;
    size_t n = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t c = 0;
        while (c < 5 && strcmp(t, column_names[c]) != 0)
            c++;
        if (c == 5)
            gpc_cli_usage("--columns: unknown column '%s' (use p, plugin, mean, var, label)", t);
        if (n == MAX_COLUMNS)
            gpc_cli_usage("--columns: at most %d columns", MAX_COLUMNS);
        cols[n++] = (column)c;
    }
    free(copy);
    if (n == 0)
        gpc_cli_usage("--columns: no columns given");
    return n;
}

int main(int argc, char **argv)
{
    const char *model_path = NULL, *out = "-", *columns = "p,mean,var,label";
    int plugin = 0, c;
    gpc_format fmt = GPC_FMT_TEXT;
    gpc_cli_init(argc, argv);
    while ((c = getopt_long(argc, argv, "m:c:o:F:vqhV", long_options, NULL)) != -1) {
        if (gpc_cli_common(c, optarg, &fmt))
            continue;
        switch (c) {
        case 'm': model_path = optarg; break;
        case 'c': columns = optarg; break;
        case 'o': out = optarg; break;
        case OPT_PLUGIN: plugin = 1; break;
        case 'h': usage();
        }
    }
    if (!model_path)
        gpc_cli_usage("a model is required (-m FILE, as written by gpc-fit)");
    if (argc - optind > 1)
        gpc_cli_usage("expected at most one input file");
    column cols[MAX_COLUMNS];
    size_t ncols = parse_columns(columns, cols);
    const char *xpath = optind < argc ? argv[optind] : "-";
    if (strcmp(xpath, "-") == 0 && strcmp(model_path, "-") == 0)
        gpc_cli_usage("the model and the inputs cannot both be standard input");

    gpc_model *m;
    gpc_cli_check(gpc_model_read(model_path, &m));
    gsl_matrix *Xs = gpc_cli_read_matrix(xpath, m->X->size2, "the model's inputs");
    size_t n = Xs->size1;
    gsl_vector *mean = gsl_vector_alloc(n), *var = gsl_vector_alloc(n), *p = gsl_vector_alloc(n);
    gpc_cli_check(gpc_model_predict(m, Xs, mean, var, p));

    gsl_matrix *res = gsl_matrix_alloc(n, ncols);
    for (size_t i = 0; i < n; i++) {
        double mu = gsl_vector_get(mean, i);
        double pl = exp(gpc_lik_logp(m->lik, 1.0, mu, NULL, NULL, NULL));
        double pi = plugin ? pl : gsl_vector_get(p, i);
        for (size_t j = 0; j < ncols; j++) {
            double v = 0.0;
            switch (cols[j]) {
            case COL_P: v = pi; break;
            case COL_PLUGIN: v = pl; break;
            case COL_MEAN: v = mu; break;
            case COL_VAR: v = gsl_vector_get(var, i); break;
            case COL_LABEL: v = pi >= 0.5 ? 1.0 : -1.0; break;
            }
            gsl_matrix_set(res, i, j, v);
        }
    }
    gpc_cli_write_matrix(out, res, fmt);
    gsl_matrix_free(res);
    gsl_matrix_free(Xs);
    gsl_vector_free(mean);
    gsl_vector_free(var);
    gsl_vector_free(p);
    gpc_model_free(m);
    return 0;
}
