/* gpc-predict — class probabilities, latent means and variances and labels
 * for new inputs from a model written by gpc-fit. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "chain.h"
#include "cli.h"
#include "err.h"
#include "labels.h"
#include "matio.h"
#include "method.h"
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
           "                        (the model's positive class if p >= 1/2, else its\n"
           "                        negative one: numeric classes as their numbers, words\n"
           "                        as +1/-1 under a '# label:' line naming them);\n"
           "                        default p,mean,var,label\n"
           "      --plugin          use the plug-in probability for p and label\n"
           "      --chain=FILE      average over the hyperparameter samples of a chain\n"
           "                        from gpc-hmc (run on the model's training data,\n"
           "                        with a Laplace model of the chain's likelihood):\n"
           "                        p and plugin are averaged, mean and var are the\n"
           "                        moments of the latent mixture\n"
           "      --loo[=HOW]       predict each training case of the model with that case\n"
           "                        left out, instead of new inputs: cavity (default; the\n"
           "                        estimate the fitted approximation gives for free) or\n"
           "                        exact (n refits at the model's hyperparameters)\n"
           "  -b, --burn=B          with --chain: samples to discard first (default: the\n"
           "                        first third)\n"
           "      --thin=T          with --chain: use every T-th sample (default 1)\n"
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

enum { OPT_PLUGIN = 256, OPT_CHAIN, OPT_THIN, OPT_LOO };

static const struct option long_options[] = {
    {"model", required_argument, NULL, 'm'},
    {"columns", required_argument, NULL, 'c'},
    {"plugin", no_argument, NULL, OPT_PLUGIN},
    {"chain", required_argument, NULL, OPT_CHAIN},
    {"burn", required_argument, NULL, 'b'},
    {"thin", required_argument, NULL, OPT_THIN},
    {"loo", optional_argument, NULL, OPT_LOO},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'F'},
    GPC_CLI_COMMON_OPTIONS};

typedef enum { COL_P, COL_PLUGIN, COL_MEAN, COL_VAR, COL_LABEL } column;
static const char *const column_names[] = {"p", "plugin", "mean", "var", "label"};
#define MAX_COLUMNS 16

static size_t parse_columns(const char *list, column *cols)
{
    char *copy = gpc_strdup(list), *save = NULL;
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

/* Per test case, averaged over the hyperparameter samples used: p, the
 * plug-in probability, and the latent mixture's first two moments. */
typedef struct {
    gsl_vector *p, *plugin, *mean, *second;
    size_t samples;
} averages;

static averages averages_alloc(size_t n)
{
    averages a = {gpc_vector_calloc(n), gpc_vector_calloc(n), gpc_vector_calloc(n),
                  gpc_vector_calloc(n), 0};
    return a;
}

static void averages_free(averages *a)
{
    gsl_vector_free(a->p);
    gsl_vector_free(a->plugin);
    gsl_vector_free(a->mean);
    gsl_vector_free(a->second);
}

typedef enum { LOO_NONE, LOO_CAVITY, LOO_EXACT } loo_mode;

/* Predict with the model's current hyperparameters and mode (or leave one
 * out of its training cases); add to a. */
static void accumulate(const gpc_model *m, const gsl_matrix *Xs, loo_mode loo, averages *a)
{
    size_t n = Xs->size1;
    gsl_vector *mean = gpc_vector_alloc(n), *var = gpc_vector_alloc(n), *p = gpc_vector_alloc(n);
    if (loo == LOO_CAVITY)
        gpc_cli_check(gpc_model_loo(m, mean, var, p));
    else if (loo == LOO_EXACT)
        gpc_cli_check(gpc_model_loo_exact(m, mean, var, p));
    else
        gpc_cli_check(gpc_model_predict(m, Xs, mean, var, p));
    for (size_t i = 0; i < n; i++) {
        double mu = gsl_vector_get(mean, i), v = gsl_vector_get(var, i);
        *gsl_vector_ptr(a->p, i) += gsl_vector_get(p, i);
        double pl = exp(gpc_lik_logp(m->lik, 1.0, mu, NULL, NULL, NULL));
        *gsl_vector_ptr(a->plugin, i) += gpc_lik_noisy(m->label_noise, pl);
        *gsl_vector_ptr(a->mean, i) += mu;
        *gsl_vector_ptr(a->second, i) += v + mu * mu;
    }
    a->samples++;
    gsl_vector_free(mean);
    gsl_vector_free(var);
    gsl_vector_free(p);
}

/* The chain's samples after burn-in, every thin-th, refitted and averaged. */
static void accumulate_chain(gpc_model *m, const char *path, long burn, long thin,
                             const gsl_matrix *Xs, averages *a)
{
    gpc_chain *ch;
    const char *name = gpc_cli_name(path);
    /* the model's inputs bound the chain's sizes before they are used */
    gpc_cli_check(gpc_chain_read(path, m->X->size2, &ch));
    if (strcmp(ch->set.kernel, gpc_kernel_spec(m->kernel)) != 0 ||
        ch->set.ntrain != m->X->size1 || ch->set.data_hash != gpc_chain_data_hash(m->X, m->y))
        gpc_die(GPC_EINPUT, "%s: the chain is not for this model (kernel or training data "
                "differ); fit the model on the chain's data with -k '%s'", name,
                ch->set.kernel);
    /* the samples are of the posterior under the Laplace evidence with this
     * likelihood; under another method they would be averaged wrongly */
    if (strcmp(m->method, gpc_method_name(GPC_METHOD_LAPLACE)) != 0 || ch->set.lik != m->lik ||
        m->label_noise != 0.0)
        gpc_die(GPC_EINPUT, "%s: the chain was sampled under the Laplace evidence with the "
                "%s likelihood, the model is %s %s%s; fit it with -M laplace -l %s", name,
                gpc_lik_name(ch->set.lik), m->method, gpc_lik_name(m->lik),
                m->label_noise != 0.0 ? " with label noise" : "", gpc_lik_name(ch->set.lik));
    size_t first = burn >= 0 ? (size_t)burn : ch->rows / 3;
    if (first >= ch->rows)
        gpc_die(GPC_EINPUT, "%s: no samples left after a burn-in of %zu", name, first);
    size_t total = (ch->rows - first + (size_t)thin - 1) / (size_t)thin, done = 0;
    for (size_t r = first; r < ch->rows; r += (size_t)thin) {
        gpc_cli_check(gpc_model_refit(m, ch->theta + r * ch->p));
        accumulate(m, Xs, LOO_NONE, a);
        if (++done % 20 == 0)
            gpc_info(1, "%zu of %zu samples", done, total);
    }
    gpc_chain_free(ch);
}

static int has_column(const column *cols, size_t ncols, column c)
{
    for (size_t j = 0; j < ncols; j++)
        if (cols[j] == c)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *model_path = NULL, *chain_path = NULL, *out = "-", *columns = "p,mean,var,label";
    int plugin = 0, c;
    loo_mode loo = LOO_NONE;
    long burn = -1, thin = 1;
    gpc_format fmt = GPC_FMT_TEXT;
    gpc_cli_init(argc, argv);
    while ((c = getopt_long(argc, argv, "m:b:c:o:F:vqhV", long_options, NULL)) != -1) {
        if (gpc_cli_common(c, optarg, &fmt))
            continue;
        switch (c) {
        case 'm': model_path = optarg; break;
        case OPT_CHAIN: chain_path = optarg; break;
        case 'b': burn = gpc_cli_long("--burn", optarg, 0, 100000000); break;
        case OPT_THIN: thin = gpc_cli_long("--thin", optarg, 1, 100000000); break;
        case 'c': columns = optarg; break;
        case 'o': out = optarg; break;
        case OPT_PLUGIN: plugin = 1; break;
        case OPT_LOO:
            if (!optarg || strcmp(optarg, "cavity") == 0)
                loo = LOO_CAVITY;
            else if (strcmp(optarg, "exact") == 0)
                loo = LOO_EXACT;
            else
                gpc_cli_usage("--loo: '%s' is not cavity or exact", optarg);
            break;
        case 'h': usage();
        }
    }
    if (!model_path)
        gpc_cli_usage("a model is required (-m FILE, as written by gpc-fit)");
    if (argc - optind > 1)
        gpc_cli_usage("expected at most one input file");
    if (loo != LOO_NONE && (chain_path || argc - optind > 0))
        gpc_cli_usage("--loo predicts the model's own training cases: give no inputs and no "
                      "--chain");
    if (!chain_path && (burn >= 0 || thin != 1))
        gpc_cli_usage("--burn and --thin apply to --chain");
    column cols[MAX_COLUMNS];
    size_t ncols = parse_columns(columns, cols);
    const char *xpath = optind < argc ? argv[optind] : "-";
    gpc_cli_stdin_claim("the model (-m)", model_path);
    gpc_cli_stdin_claim("--chain", chain_path);
    if (loo == LOO_NONE)
        gpc_cli_stdin_claim("the inputs", xpath);
    gpc_output *output = gpc_cli_output(out);

    gpc_model *m;
    gpc_cli_check(gpc_model_read(model_path, &m));
    gsl_matrix *Xs = loo != LOO_NONE ? m->X : gpc_cli_read_matrix(xpath, m->X->size2,
                                                                    "the model's inputs");
    size_t n = Xs->size1;
    averages a = averages_alloc(n);
    if (chain_path)
        accumulate_chain(m, chain_path, burn, thin, Xs, &a);
    else
        accumulate(m, Xs, loo, &a);

    /* the label column speaks the model's classes: their numbers when they are
     * numbers (so -1/1 models write -1/1 as always), else -1/+1 with a header
     * line naming the words, which matrix readers skip as a comment */
    double label_value[2];
    int words = !gpc_labels_number(gpc_model_class(m, 0), &label_value[0]) ||
                !gpc_labels_number(gpc_model_class(m, 1), &label_value[1]);
    if (words) {
        label_value[0] = -1.0;
        label_value[1] = 1.0;
    }
    gsl_matrix *res = gpc_matrix_alloc(n, ncols);
    double k = 1.0 / (double)a.samples;
    for (size_t i = 0; i < n; i++) {
        double mu = k * gsl_vector_get(a.mean, i), pl = k * gsl_vector_get(a.plugin, i);
        double pi = plugin ? pl : k * gsl_vector_get(a.p, i);
        for (size_t j = 0; j < ncols; j++) {
            double v = 0.0;
            switch (cols[j]) {
            case COL_P: v = pi; break;
            case COL_PLUGIN: v = pl; break;
            case COL_MEAN: v = mu; break;
            case COL_VAR: v = fmax(0.0, k * gsl_vector_get(a.second, i) - mu * mu); break;
            case COL_LABEL: v = label_value[pi >= 0.5]; break;
            }
            gsl_matrix_set(res, i, j, v);
        }
    }
    if (words && fmt == GPC_FMT_TEXT && has_column(cols, ncols, COL_LABEL))
        fprintf(gpc_output_file(output), "# label: -1 %s, 1 %s\n", gpc_model_class(m, 0),
                gpc_model_class(m, 1));
    gpc_cli_write_matrix(output, res, fmt);
    gsl_matrix_free(res);
    if (Xs != m->X)
        gsl_matrix_free(Xs);
    averages_free(&a);
    gpc_model_free(m);
    return 0;
}
