/* gpc-hmc — sample the kernel hyperparameters of a GP classifier by
 * Hybrid Monte Carlo on the Laplace approximation to their posterior
 * (Barber & Williams 1997), or the multinomial probit model by Gibbs
 * sampling (-M gibbs); write, extend and summarise chain files. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/comm.h"
#include "base/err.h"
#include "base/progress.h"
#include "cli/cli.h"
#include "hyper/evidence.h"
#include "io/colnames.h"
#include "io/matio.h"
#include "kernels/class-kernels.h"
#include "sampling/chain.h"
#include "sampling/diagnose.h"
#include "sampling/gibbs.h"
#include "sampling/hmc.h"

static void usage(void)
{
    printf("Usage: %s [OPTION]... X [Y]\n"
           "  or:  %s --extend=CHAIN [-n N] [OPTION]... X [Y]\n"
           "  or:  %s --summary [--burn=B] CHAIN...\n"
           "Sample the log hyperparameters of a GP classifier (Laplace approximation,\n"
           "binary, or multiclass with the softmax likelihood for labels of three or more\n"
           "classes) from their posterior by Hybrid Monte Carlo, and write the chain: one\n"
           "row per iteration.  With -M gibbs, sample the multinomial probit model (any\n"
           "number of classes) by Gibbs sampling instead.  A LIBSVM file X ('label\n"
           "index:value ...', see gpc-formats(5)) holds the labels too: leave Y out.\n"
           "\n"
           "  -M, --method=NAME        laplace (default: HMC on the Laplace evidence), ep\n"
           "                           (HMC on the EP evidence: probit EP, or nested EP\n"
           "                           with three or more classes) or gibbs (auxiliary\n"
           "                           values, latent functions and Metropolis-Hastings\n"
           "                           steps on the hyperparameters)\n"
           "  -k, --kernel=SPEC        covariance function (default ard)\n"
           GPC_CLI_PER_CLASS_HELP
           "  -l, --likelihood=NAME    logistic (default with two classes), probit or\n"
           "                           softmax (default with three or more); mprobit\n"
           "                           (the only one) with -M gibbs; with -M ep probit\n"
           "                           (default) or step, and mprobit (the default with\n"
           "                           three or more classes)\n"
           "  -p, --params=LIST        starting hyperparameters: name=value,... or all\n"
           "                           values (default: log_v0 0, log_w -2, see gpc-kernel)\n"
           "  -H, --params-file=FILE   starting hyperparameters from 'name value' lines\n"
           "  -n, --iterations=N       iterations to run (default 200)\n"
           "  -e, --step=EPS           leapfrog step size (the first one, when adapted), or\n"
           "                           with -M gibbs the standard deviation of the\n"
           "                           random-walk proposals (default 0.1)\n"
           "      --adapt=W|none       tune the step by dual averaging over the first W\n"
           "                           iterations, then keep it fixed (default 50); none\n"
           "                           keeps --step throughout (not gibbs, whose step is\n"
           "                           always fixed)\n"
           "      --target-accept=A    the acceptance rate the adaptation aims at, in\n"
           "                           (0, 1) (default 0.6)\n"
           "  -L, --leapfrog=N         leapfrog steps per iteration (default 20; not gibbs)\n"
           "  -a, --persistence=A      momentum persistence in [0, 1): 0 (default) draws\n"
           "                           momenta afresh; A > 0 refreshes them partially\n"
           "                           (not gibbs)\n"
           "      --prior-mean=M       mean of the Gaussian prior on each log\n"
           "                           hyperparameter (default -3)\n"
           "      --prior-sd=S         its standard deviation (default 3)\n"
           "      --fix=NAMES          keep these hyperparameters (comma-separated) at\n"
           "                           their starting values; with -M gibbs, fixing all\n"
           "                           samples f and y at given hyperparameters\n"
           "  -S, --seed=N             random seed (default 1)\n"
           "  -T, --time-limit=SEC     stop cleanly after the iteration running when SEC\n"
           "                           seconds have passed (at least one iteration is\n"
           "                           run); the chain can be extended\n"
           "  -x, --extend=CHAIN       continue CHAIN by N iterations with its own settings\n"
           "                           (appended in place unless -o is given; '-' reads\n"
           "                           it from standard input and writes to -o or stdout)\n"
           "  -s, --summary            summarise the chains given as arguments\n"
           "  -b, --burn=B             with --summary: iterations to discard (default: the\n"
           "                           first third, or the warm-up if longer; at least\n"
           "                           the warm-up)\n"
           "  -o, --output=FILE        write the chain here (default: standard output)\n"
           "  -v, --verbose            a progress line every iteration\n"
           GPC_CLI_HEADER_HELP
           GPC_CLI_LABEL_COLUMN_HELP
           GPC_CLI_PROCESS_GRID_HELP
           "  -q, --quiet              no progress lines\n"
           "  -h, --help               show this help and exit\n"
           "  -V, --version            show the version and exit\n"
           "\n"
           "Every iteration is on disk before the next starts.  SIGINT, SIGTERM or SIGHUP\n"
           "stops the run after the current iteration, with the chain whole; --extend\n"
           "continues it exactly.\n"
           "\n"
           "Exit status: 0 success, 1 numerical failure (the rows before it are kept),\n"
           "2 usage error, 3 input or output error; stopped by a signal, the program\n"
           "ends by that signal (status 128+N in the shell).\n",
           gpc_progname(), gpc_progname(), gpc_progname());
    gpc_cli_exit_written(); /* exit 0, or 3 if the help could not be written */
}

enum { OPT_PRIOR_MEAN = 256, OPT_PRIOR_SD, OPT_PER_CLASS, OPT_FIX, OPT_ADAPT, OPT_TARGET };

static const struct option long_options[] = {
    {"method", required_argument, NULL, 'M'},
    {"kernel", required_argument, NULL, 'k'},
    {"per-class", no_argument, NULL, OPT_PER_CLASS},
    {"fix", required_argument, NULL, OPT_FIX},
    {"likelihood", required_argument, NULL, 'l'},
    {"params", required_argument, NULL, 'p'},
    {"params-file", required_argument, NULL, 'H'},
    {"iterations", required_argument, NULL, 'n'},
    {"step", required_argument, NULL, 'e'},
    {"adapt", required_argument, NULL, OPT_ADAPT},
    {"target-accept", required_argument, NULL, OPT_TARGET},
    {"leapfrog", required_argument, NULL, 'L'},
    {"persistence", required_argument, NULL, 'a'},
    {"prior-mean", required_argument, NULL, OPT_PRIOR_MEAN},
    {"prior-sd", required_argument, NULL, OPT_PRIOR_SD},
    {"seed", required_argument, NULL, 'S'},
    {"time-limit", required_argument, NULL, 'T'},
    {"extend", required_argument, NULL, 'x'},
    {"summary", no_argument, NULL, 's'},
    {"burn", required_argument, NULL, 'b'},
    {"output", required_argument, NULL, 'o'},
    GPC_CLI_LABEL_COLUMN_OPTION,
    GPC_CLI_PROCESS_GRID_OPTIONS,
    GPC_CLI_COMMON_OPTIONS};

typedef struct {
    const char *method, *kernel, *lik, *params, *params_file, *extend, *out, *fix, *adapt;
    int target_given;
    long iterations, burn;
    double time_limit;
    int summary, settings_given, per_class, hmc_only_given;
    gpc_chain_settings set;
} options;

/* Iterations adapting the step by default: fewer than the third of the
 * default run that predictions discard anyway, and the same however long
 * the run, so that a chain extended by -x is the longer run byte for byte. */
#define DEFAULT_WARMUP 50

/* The warm-up of a new HMC chain: --adapt's W, none (0), or the default. */
static long warmup(const options *o)
{
    if (o->adapt && strcmp(o->adapt, "none") == 0) {
        if (o->target_given)
            gpc_cli_usage("--target-accept is for an adapted step; --adapt=none keeps "
                          "--step");
        return 0;
    }
    if (o->adapt) {
        char *end;
        errno = 0;
        long w = strtol(o->adapt, &end, 10);
        if (end == o->adapt || *end || errno == ERANGE || w < 1 || w > 100000000)
            gpc_cli_usage("--adapt: '%s' is not none or a number of iterations from 1 to "
                          "100000000", o->adapt);
        return w;
    }
    return DEFAULT_WARMUP;
}

static void parse_options(int argc, char **argv, options *o)
{
    int c;
    gpc_format unused;
    while ((c = getopt_long(argc, argv, "M:k:l:p:H:n:e:L:a:S:T:x:sb:o:vqhV", long_options,
                            NULL)) != -1) {
        if (gpc_cli_common(c, optarg, &unused))
            continue;
        o->settings_given |= strchr("MkleLaS", c) != NULL || c == OPT_PRIOR_MEAN ||
                             c == OPT_PRIOR_SD || c == OPT_PER_CLASS || c == OPT_FIX ||
                             c == OPT_ADAPT || c == OPT_TARGET;
        o->hmc_only_given |= c == 'L' || c == 'a' || c == OPT_ADAPT || c == OPT_TARGET;
        switch (c) {
        case 'M': o->method = optarg; break;
        case 'k': o->kernel = optarg; break;
        case OPT_PER_CLASS: o->per_class = 1; break;
        case OPT_FIX: o->fix = optarg; break;
        case 'l': o->lik = optarg; break;
        case 'p': o->params = optarg; break;
        case 'H': o->params_file = optarg; break;
        case 'n': o->iterations = gpc_cli_long("--iterations", optarg, 0, 100000000); break;
        case 'e': o->set.hmc.step = gpc_cli_double("--step", optarg); break;
        case OPT_ADAPT: o->adapt = optarg; break;
        case OPT_TARGET:
            o->set.target = gpc_cli_double("--target-accept", optarg);
            o->target_given = 1;
            break;
        case 'L': o->set.hmc.leapfrog = (int)gpc_cli_long("--leapfrog", optarg, 1, 100000); break;
        case 'a': o->set.hmc.persistence = gpc_cli_double("--persistence", optarg); break;
        case OPT_PRIOR_MEAN: o->set.prior_mean = gpc_cli_double("--prior-mean", optarg); break;
        case OPT_PRIOR_SD: o->set.prior_sd = gpc_cli_double("--prior-sd", optarg); break;
        case 'S': o->set.hmc.seed = (unsigned long)gpc_cli_long("--seed", optarg, 0, 4294967295L); break;
        case 'T': o->time_limit = gpc_cli_double("--time-limit", optarg); break;
        case 'x': o->extend = optarg; break;
        case 's': o->summary = 1; break;
        case 'b': o->burn = gpc_cli_long("--burn", optarg, 0, 100000000); break;
        case 'o': o->out = optarg; break;
        case 'h': usage();
        }
    }
    if (!(o->set.hmc.step > 0))
        gpc_cli_usage("--step must be positive");
    if (!(o->set.hmc.persistence >= 0 && o->set.hmc.persistence < 1))
        gpc_cli_usage("--persistence must be in [0, 1)");
    if (!(o->set.prior_sd > 0))
        gpc_cli_usage("--prior-sd must be positive");
    if (o->time_limit < 0)
        gpc_cli_usage("--time-limit must not be negative");
    if (!(o->set.target > 0 && o->set.target < 1))
        gpc_cli_usage("--target-accept must be in (0, 1)");
    if (o->extend && (o->settings_given || o->params || o->params_file))
        gpc_cli_usage("--extend takes its settings and state from the chain; give only -n");
    if (o->summary && o->extend)
        gpc_cli_usage("--summary and --extend cannot be combined");
    if (strcmp(o->method, "laplace") != 0 && strcmp(o->method, "gibbs") != 0 &&
        strcmp(o->method, "ep") != 0)
        gpc_cli_usage("--method: '%s' is not laplace, ep or gibbs", o->method);
    o->set.gibbs = strcmp(o->method, "gibbs") == 0;
    o->set.ep = strcmp(o->method, "ep") == 0;
    if (o->set.gibbs) {
        if (o->hmc_only_given)
            gpc_cli_usage("-M gibbs has no leapfrog steps or momenta and keeps its step: "
                          "--leapfrog, --persistence, --adapt and --target-accept are for "
                          "-M laplace");
        o->set.lik = gpc_cli_lik(o->lik ? o->lik : "mprobit");
        if (o->set.lik != GPC_LIK_MPROBIT)
            gpc_cli_usage("-M gibbs samples the multinomial probit model: -l mprobit, not %s",
                          o->lik);
        return;
    }
    if (o->set.ep) {
        o->set.lik = gpc_cli_lik(o->lik ? o->lik : "probit");
        if (o->set.lik != GPC_LIK_PROBIT && o->set.lik != GPC_LIK_STEP &&
            o->set.lik != GPC_LIK_MPROBIT)
            gpc_cli_usage("--likelihood %s: -M ep takes probit or step (two classes) or "
                          "mprobit (nested EP, any number)", o->lik);
        o->set.adapt = warmup(o);
        return;
    }
    o->set.lik = gpc_cli_lik(o->lik ? o->lik : "logistic");
    if (o->set.lik == GPC_LIK_STEP || o->set.lik == GPC_LIK_MPROBIT)
        gpc_cli_usage("--likelihood %s: the sampler uses the Laplace evidence, which takes "
                      "logistic, probit or softmax (gpc-fit -M %s takes %s)", o->lik,
                      o->set.lik == GPC_LIK_STEP ? "ep" : "vb", o->lik);
    o->set.adapt = warmup(o);
}

/* Every path argument that may be standard input, so that two of them
 * cannot both read it. */
static void claim_inputs(const options *o, int argc, char **argv)
{
    gpc_cli_stdin_claim("-H", o->params_file);
    if (o->summary) {
        /* each chain by its place: a claim under the same name is allowed twice */
        for (int i = optind; i < argc; i++) {
            if (strcmp(argv[i], "-") != 0)
                continue;
            char what[32];
            snprintf(what, sizeof what, "chain %d", i - optind + 1);
            gpc_cli_stdin_claim(what, argv[i]);
        }
        return;
    }
    gpc_cli_stdin_claim("--extend", o->extend);
    gpc_cli_stdin_claim_training(argc, argv);
}

/* ---- summary ------------------------------------------------------------ */

static int constant(const double *x, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (x[i] != x[0])
            return 0;
    return 1;
}

/* With an adapted step, the step of the kept rows (from burn on, after
 * the warm-up: frozen), chain by chain when they differ; a fixed step is
 * the one in the chains' headers, and the line stays as it always was. */
static void print_steps(gpc_chain *const *c, size_t m, size_t burn)
{
    int same = 1, adapted = 0;
    for (size_t i = 0; i < m; i++) {
        same &= c[i]->step[burn] == c[0]->step[burn];
        adapted |= c[i]->set.adapt > 0;
    }
    if (adapted) {
        printf(", step%s", same || m == 1 ? "" : "s");
        for (size_t i = 0; i < (same ? 1 : m); i++)
            printf("%s %.4g", i ? "," : "", c[i]->step[burn]);
        printf(" (adapted)");
    }
    putchar('\n');
}

static void summarise(int nchains, char **paths, long burn_opt)
{
    gpc_chain **c = gpc_calloc((size_t)nchains, sizeof *c);
    const char **names = gpc_calloc((size_t)nchains, sizeof *names);
    for (int i = 0; i < nchains; i++) {
        gpc_cli_check(gpc_chain_read(paths[i], 0, &c[i]));
        names[i] = gpc_cli_name(paths[i]);
    }
    /* R-hat and the pooled ESS compare the chains as draws of one posterior */
    gpc_cli_check(gpc_chain_check_pool(c, names, (size_t)nchains));
    size_t p = c[0]->p, n = c[0]->rows;
    for (int i = 1; i < nchains; i++)
        if (c[i]->rows < n)
            n = c[i]->rows; /* compare chains over their common length */
    size_t burn = 0;
    for (int i = 0; i < nchains; i++) { /* past every chain's warm-up */
        size_t b;
        gpc_cli_check(gpc_chain_burn(c[i], names[i], burn_opt, n, &b));
        burn = b > burn ? b : burn;
    }
    free(names);
    if (burn + 4 > n)
        gpc_die(GPC_EINPUT, "%s: %zu iterations leave too few after a burn-in of %zu",
                paths[0], n, burn);
    size_t keep = n - burn, m = (size_t)nchains;
    long acc = 0;
    for (size_t i = 0; i < m; i++)
        for (size_t r = burn; r < n; r++)
            acc += c[i]->accepted[r];
    printf("# %zu chain%s, iterations %zu..%zu of each (%zu kept), acceptance rate %.3f", m,
           m > 1 ? "s" : "", burn + 1, n, keep, (double)acc / (double)(m * keep));
    print_steps(c, m, burn);
    /* names after columns may be long: the first column is as wide as they */
    int w = 16;
    for (size_t j = 0; j < p; j++)
        w = (int)(strlen(c[0]->names[j]) > (size_t)w ? strlen(c[0]->names[j]) : (size_t)w);
    printf("%-*s %12s %12s %10s %8s\n", w, "name", "mean", "sd", "ess", "rhat");
    double *x = gpc_malloc(m * keep * sizeof *x);
    for (size_t j = 0; j <= p; j++) {
        for (size_t i = 0; i < m; i++)
            for (size_t r = 0; r < keep; r++)
                x[i * keep + r] = j < p ? c[i]->theta[(burn + r) * p + j]
                                        : c[i]->log_evidence[burn + r];
        double mean, sd;
        gpc_diag_mean_sd(x, m * keep, &mean, &sd);
        const char *name = j < p ? c[0]->names[j] : gpc_chain_second_name(&c[0]->set);
        if (constant(x, m * keep)) /* a fixed hyperparameter: no mixing to measure */
            printf("%-*s %12.6g %12.6g %10s %8s\n", w, name, x[0], 0.0, "-", "-");
        else
            printf("%-*s %12.6g %12.6g %10.1f %8.4f\n", w, name, mean, sd,
                   gpc_diag_ess_chains(x, m, keep), gpc_diag_split_rhat(x, m, keep));
    }
    free(x);
    for (int i = 0; i < nchains; i++)
        gpc_chain_free(c[i]);
    free(c);
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout))
        gpc_die(GPC_EINPUT, "<stdout>: write error: %s", strerror(errno ? errno : EIO));
}

/* ---- sampling ----------------------------------------------------------- */

typedef struct {
    gsl_matrix *X;
    gpc_labels *labels;
    gsl_vector *y;      /* the labels as the method takes them */
    gpc_method method;  /* binary or multiclass Laplace, by the likelihood */
    gpc_kernel *kernel;
    char **names;          /* the inputs' column names (a new run's spec may use them) */
    gpc_hmc *hmc;
    gpc_step_adapt adapt;  /* the step's adaptation, as of the chain's last row */
    const gpc_chain *from; /* the chain being extended, or NULL */
} run_state;

/* The method a chain samples under, before the labels settle it: Gibbs
 * samples the variational model's posterior, HMC the Laplace or EP
 * evidence (softmax Laplace or nested EP with three or more classes). */
static gpc_method chain_method(const gpc_chain_settings *set)
{
    return set->gibbs ? GPC_METHOD_VB : set->ep ? GPC_METHOD_EP : GPC_METHOD_LAPLACE;
}

/* The training set, and the method for the likelihood: multiclass Laplace
 * for softmax, which is the default with three or more classes, and nested
 * EP for mprobit with -M ep. */
static void read_training(int argc, char **argv, int lik_named, gpc_chain_settings *set,
                          run_state *rs)
{
    gpc_cli_read_training(argc, argv, &rs->X, &rs->names, &rs->labels);
    rs->method = chain_method(set);
    rs->y = gpc_cli_class_vector(rs->labels, lik_named, NULL, &rs->method, &set->lik);
    set->classes = set->gibbs ? rs->labels->nclasses : 0;
}

/* A new run: settings from the options, the start from the kernel defaults
 * and -p/-H. */
static void start_new(const options *o, int argc, char **argv, run_state *rs,
                      gpc_chain_settings *set)
{
    *set = o->set;
    read_training(argc, argv, o->lik != NULL, set, rs);
    rs->kernel = gpc_cli_class_kernel(o->kernel, o->per_class, rs->labels, rs->method,
                                      rs->X, rs->names, argv[optind], o->params_file,
                                      o->params);
    snprintf(set->kernel, sizeof set->kernel, "%s", gpc_kernel_spec(rs->kernel));
    set->dim = rs->X->size2;
    set->ntrain = rs->X->size1;
    set->data_hash = gpc_chain_data_hash(rs->X, rs->y);
    unsigned char *fixed = gpc_cli_fixed_mask(rs->kernel, o->fix);
    set->fixed = gpc_chain_fixed_list(rs->kernel, fixed);
    set->hmc.fixed = fixed;
    if (!set->gibbs && fixed && !memchr(fixed, 0, gpc_kernel_nparams(rs->kernel)))
        gpc_cli_usage("--fix keeps every hyperparameter: HMC has nothing to sample (-M gibbs "
                      "samples the latent values at fixed hyperparameters)");
    rs->hmc = gpc_hmc_alloc(gpc_kernel_nparams(rs->kernel));
    gpc_hmc_set_state(rs->hmc, gpc_kernel_params(rs->kernel), NULL, 0);
    gpc_step_adapt_init(&rs->adapt, set->hmc.step, set->target);
}

/* Continue a chain: settings and the state of its last row.  The data come
 * first, so that the chain's sizes are checked against them before anything
 * is allocated by those sizes. */
static void start_extend(const options *o, int argc, char **argv, run_state *rs,
                         gpc_chain_settings *set)
{
    gpc_chain *ch;
    const char *name = gpc_cli_name(o->extend);
    gpc_cli_read_training(argc, argv, &rs->X, NULL, &rs->labels);
    gpc_cli_check(gpc_chain_read(o->extend, rs->X->size2, &ch));
    *set = ch->set;
    rs->method = chain_method(set);
    rs->y = gpc_cli_class_vector(rs->labels, 1, NULL, &rs->method, &set->lik);
    if (set->gibbs && set->classes != rs->labels->nclasses)
        gpc_die(GPC_EINPUT, "%s: the chain has %zu classes, the labels %zu; give the labels "
                "it was run on", name, set->classes, rs->labels->nclasses);
    if (rs->X->size1 != set->ntrain || gpc_chain_data_hash(rs->X, rs->y) != set->data_hash)
        gpc_die(GPC_EINPUT, "%s: the chain was run on other training data (%zu cases of "
                "dimension %zu); give the same X and Y", name, set->ntrain, set->dim);
    if (ch->rows == 0)
        gpc_die(GPC_EINPUT, "%s: the chain has no rows to continue from; start a new one",
                name);
    if (gpc_kernel_parse(set->kernel, set->dim, &rs->kernel) != GPC_OK)
        gpc_die(GPC_EINPUT, "%s: %s", name, gpc_errmsg());
    set->hmc.fixed = set->fixed ? gpc_cli_fixed_mask(rs->kernel, set->fixed) : NULL;
    rs->hmc = gpc_hmc_alloc(ch->p);
    size_t last = ch->rows - 1;
    gpc_hmc_set_state(rs->hmc, ch->theta + last * ch->p, ch->mom ? ch->mom + last * ch->p : NULL,
                      ch->iteration[last]);
    /* the step the next iteration would have had in one longer run */
    gpc_cli_check(gpc_chain_resume_step(ch, name, &rs->adapt, &set->hmc.step));
    rs->from = ch;
}

/* Where the chain goes: appended in place when a chain file is extended
 * without -o, else a new file (or standard output) that starts with the
 * header or with a copy of the chain being extended. */
static gpc_chain_out *open_output(const options *o, const run_state *rs,
                                  const gpc_chain_settings *set, const char **name)
{
    gpc_chain_out *out;
    int in_place = rs->from && !o->out && strcmp(o->extend, "-") != 0;
    *name = gpc_cli_name(o->out ? o->out : in_place ? o->extend : "-");
    /* of several processes, rank 0 alone writes (the others sample the same
     * chain) */
    if (gpc_comm_rank(gpc_comm_world()) != 0) {
        gpc_cli_check(gpc_chain_out_create("/dev/null", &out));
        return out;
    }
    if (in_place) {
        gpc_cli_check(gpc_chain_out_append(o->extend, rs->from, &out));
        return out;
    }
    gpc_cli_check(gpc_chain_out_create(o->out, &out));
    FILE *f = gpc_chain_out_file(out);
    if (rs->from)
        fwrite(rs->from->text, 1, rs->from->text_len, f);
    else
        gpc_chain_write_header(f, set, rs->kernel);
    return out;
}

/* ---- stopping ------------------------------------------------------------ */

typedef struct {
    gpc_progress clock; /* counts the chain's iterations, times this run's */
    int leapfrog;
    int timed_out;
} progress;

/* The clock of a run that starts now from the chain's last iteration (0 for
 * a new chain) and asks for o->iterations more. */
static progress progress_start(const options *o, const run_state *rs, int leapfrog)
{
    progress pr = {.leapfrog = leapfrog};
    long before = rs->hmc->iteration;
    gpc_progress_start(&pr.clock, "iteration", before, before + o->iterations,
                       gpc_progress_clock());
    pr.clock.time_limit = o->time_limit;
    return pr;
}

/* Every tenth iteration of the chain, or every one with -v. */
static int progress_level(long iteration) { return iteration % 10 == 0 ? 1 : 2; }

/* Whether to stop after a row that ended at time now: a signal came, or
 * the time limit has passed.  Of several processes (a grid), every one
 * stops after the same row: a signal to any of them stops all, and the
 * time limit is rank 0's clock. */
static int should_stop(progress *pr, double now)
{
    gpc_comm *c = gpc_comm_world();
    int signalled = gpc_comm_any(c, gpc_cli_stop_signal() != 0);
    int late = pr->clock.time_limit > 0 && now - pr->clock.start >= pr->clock.time_limit;
    pr->timed_out = gpc_comm_any(c, late && gpc_comm_rank(c) == 0);
    return signalled || pr->timed_out;
}

/* After every row: a progress line, then whether to stop. */
static int after_row(void *ctx, const gpc_hmc *h, long done)
{
    progress *pr = ctx;
    double now = gpc_progress_clock(), t = now - pr->clock.start;
    char head[256];
    gpc_info(progress_level(h->iteration),
             "%s; log evidence %.6g, acceptance %.2f, %.3g ms per leapfrog step",
             gpc_progress_format(&pr->clock, h->iteration, now, head, sizeof head), h->aux,
             (double)h->n_accepted / (double)done,
             1e3 * t / (double)(done * (pr->leapfrog + 1)));
    return should_stop(pr, now);
}

/* The run ended with an error.  Rows already written stay: say where the
 * finished iterations are (from is the chain extended, NULL for a new one). */
static _Noreturn void fail_run(int st, gpc_chain_out *out, const char *name, const char *from,
                               const gpc_hmc *h, long done)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", gpc_errmsg());
    gpc_chain_out_abort(out);
    const char *where = done > 0 ? name : from;
    if (st == GPC_ENUM && where)
        gpc_die(st, "iteration %ld: %s; the iterations before it are in %s", h->iteration + 1,
                msg, where);
    gpc_die(st, "%s", msg);
}

/* Stopped by a signal: the chain is whole; end as the signal would have, so
 * that a calling shell or batch system sees it. */
static _Noreturn void end_by_signal(const char *name, const gpc_hmc *h)
{
    int sig = gpc_cli_stop_signal();
    gpc_warn("stopped by %s after iteration %ld; %s holds every finished iteration, and "
             "--extend continues it", gpc_cli_signal_name(sig), h->iteration, name);
    gpc_cli_end_by_signal(sig);
}

/* The run has written its rows: close the chain, end as a signal asked, and
 * say how it went, with the step the chain goes on with (adapted, once the
 * warm-up is over). */
static void finish_run(gpc_chain_out *out, const char *name, const run_state *rs,
                       const progress *pr, long done, long wanted, unsigned long accepted,
                       double step)
{
    gpc_cli_check(gpc_chain_out_close(out));
    if (gpc_cli_stop_signal())
        end_by_signal(name, rs->hmc);
    if (pr->timed_out && done < wanted)
        gpc_info(1, "time limit reached after %ld iterations; extend the chain to go on", done);
    gpc_info(1, "%ld iterations, acceptance %.2f, step %.3g, %.2f s", done,
             done ? (double)accepted / (double)done : 0.0, step,
             gpc_progress_clock() - pr->clock.start);
}

/* Up to o->iterations HMC iterations on the Laplace evidence. */
static void run_hmc(const options *o, run_state *rs, gpc_chain_settings *set)
{
    gpc_evidence *ev = gpc_cli_evidence(rs->kernel, rs->X, rs->y, rs->labels->nclasses,
                                        set->lik, rs->method, 1);
    gpc_posterior post = {ev, set->prior_mean, set->prior_sd};
    gpc_potential U = {gpc_posterior_eval, gpc_posterior_restart, &post};
    const char *name;
    gpc_cli_catch_stop_signals();
    gpc_chain_out *out = open_output(o, rs, set, &name);
    progress pr = progress_start(o, rs, set->hmc.leapfrog);
    long done;
    int st = gpc_chain_run(out, rs->hmc, &U, set, &rs->adapt, o->iterations, after_row, &pr,
                           &done);
    if (st != GPC_OK)
        fail_run(st, out, name, rs->from ? gpc_cli_name(o->extend) : NULL, rs->hmc, done);
    finish_run(out, name, rs, &pr, done, o->iterations, rs->hmc->n_accepted, set->hmc.step);
    if (rs->hmc->iteration < set->adapt)
        gpc_info(1, "the step adapts until iteration %ld, which the samples follow; extend the "
                 "chain past it (-x) to predict from it, or give --adapt=W", set->adapt);
    gpc_evidence_free(ev);
}

/* ---- Gibbs sampling (-M gibbs) -------------------------------------------- */

/* After every row: a progress line, then whether to stop. */
static int after_gibbs_row(progress *pr, long iteration, double log_p_y, unsigned long accepted,
                           long done)
{
    double now = gpc_progress_clock(), t = now - pr->clock.start;
    char head[256];
    gpc_info(progress_level(iteration), "%s; log p(y) %.6g, acceptance %.2f, %.3f s per iteration",
             gpc_progress_format(&pr->clock, iteration, now, head, sizeof head), log_p_y,
             (double)accepted / (double)done, t / (double)done);
    return should_stop(pr, now);
}

/* The sampler at the run's start: a new chain's y drawn for f = 0 (with
 * the generator of iteration -1), or the last row's (theta, y). */
static gpc_gibbs *gibbs_start(run_state *rs, const gpc_chain_settings *set, gpc_kernel **k,
                              size_t nK, const size_t *cls)
{
    size_t n = rs->X->size1;
    gpc_cli_check(gpc_method_check_bytes(gpc_gibbs_workspace(n, set->classes, nK),
                                         "the Gibbs sampler", n, set->classes));
    gpc_gibbs *g = gpc_gibbs_alloc(rs->X, set->classes, k, nK);
    g->prior_mean = set->prior_mean;
    g->prior_sd = set->prior_sd;
    g->step = set->hmc.step;
    gpc_gibbs_fix(g, set->hmc.fixed);
    int st;
    if (rs->from) {
        const gpc_chain *ch = rs->from;
        gsl_vector_const_view y =
            gsl_vector_const_view_array(ch->state + (ch->rows - 1) * ch->nstate, ch->nstate);
        st = gpc_gibbs_resume(g, rs->hmc->theta, &y.vector);
    } else {
        gsl_rng *r = gpc_hmc_iteration_rng(set->hmc.seed, -1);
        st = gpc_gibbs_start(g, rs->hmc->theta, cls, r);
        gsl_rng_free(r);
    }
    gpc_cli_check(st);
    return g;
}

/* Up to o->iterations Gibbs iterations, each seeded by its number and on
 * disk before the next starts. */
static void run_gibbs(const options *o, run_state *rs, const gpc_chain_settings *set)
{
    size_t n = rs->X->size1, P = rs->hmc->p;
    size_t *cls = gpc_mallocarray(n, sizeof *cls);
    for (size_t i = 0; i < n; i++)
        cls[i] = (size_t)gsl_vector_get(rs->y, i);
    gpc_class_kernels *ck = gpc_class_kernels_alloc(rs->kernel, set->classes);
    gpc_gibbs *g = gibbs_start(rs, set, ck->k, ck->nK, cls);
    const char *name;
    gpc_cli_catch_stop_signals();
    gpc_chain_out *out = open_output(o, rs, set, &name);
    progress pr = progress_start(o, rs, 0);
    long done = 0;
    while (done < o->iterations) {
        gsl_rng *r = gpc_hmc_iteration_rng(set->hmc.seed, rs->hmc->iteration);
        unsigned long before = g->accepted;
        int st = gpc_gibbs_iterate(g, cls, r);
        gsl_rng_free(r);
        if (st == GPC_OK) {
            double lpy = gpc_gibbs_log_p_y(g);
            gpc_chain_row row = {rs->hmc->iteration + 1, g->theta,
                                 -(lpy + gpc_gibbs_log_prior(g, g->theta)),
                                 lpy, g->accepted > before, g->y->data, 0.0};
            st = gpc_chain_out_values(out, set, P, &row);
            if (st == GPC_OK) {
                rs->hmc->iteration++;
                done++;
                if (after_gibbs_row(&pr, rs->hmc->iteration, lpy, g->accepted, done))
                    break;
                continue;
            }
        }
        fail_run(st, out, name, rs->from ? gpc_cli_name(o->extend) : NULL, rs->hmc, done);
    }
    finish_run(out, name, rs, &pr, done, o->iterations, g->accepted, set->hmc.step);
    gpc_gibbs_free(g);
    gpc_class_kernels_free(ck);
    free(cls);
}

int main(int argc, char **argv)
{
    /* Barber & Williams' settings */
    options o = {.method = "laplace", .kernel = "ard", .lik = NULL, .iterations = 200, .burn = -1,
                 .set = {.prior_mean = -3.0, .prior_sd = 3.0, .hmc = {0.1, 20, 0.0, 1, NULL},
                         .target = 0.6}};
    gpc_cli_init(argc, argv);
    parse_options(argc, argv, &o);
    claim_inputs(&o, argc, argv);
    if (o.summary) {
        if (optind >= argc)
            gpc_cli_usage("--summary needs at least one chain file");
        summarise(argc - optind, argv + optind, o.burn);
        return 0;
    }

    run_state rs = {0};
    gpc_chain_settings set;
    if (o.extend)
        start_extend(&o, argc, argv, &rs, &set);
    else
        start_new(&o, argc, argv, &rs, &set);
    if (set.gibbs)
        run_gibbs(&o, &rs, &set);
    else
        run_hmc(&o, &rs, &set);
    if (!o.extend)
        free(set.fixed); /* else the chain's */
    free((unsigned char *)set.hmc.fixed);
    gpc_hmc_free(rs.hmc);
    gpc_kernel_free(rs.kernel);
    gpc_chain_free((gpc_chain *)rs.from);
    gsl_matrix_free(rs.X);
    gpc_colnames_free(rs.names);
    gsl_vector_free(rs.y);
    gpc_labels_free(rs.labels);
    return 0;
}
