/* gpc-fit — fit a GP classifier, binary (Laplace approximation, EP, naive
 * mean field) or multiclass (softmax Laplace, or one-vs-rest over a binary
 * method),
 * choosing the kernel hyperparameters by type-II maximum likelihood, by MAP
 * under Gaussian priors on their logs, or keeping them as given, and the
 * label noise as given, by EM or by evidence; writes a model file. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "cli/cli.h"
#include "hyper/evidence.h"
#include "hyper/importance.h"
#include "hyper/minibatch.h"
#include "hyper/optimize.h"
#include "hyper/robust.h"
#include "io/colnames.h"
#include "io/matio.h"
#include "liks/lse.h"
#include "methods/model.h"
#include "report/score.h"
#include "sparse/mprobit-lik.h"
#include "sparse/softmax-lik.h"
#include "sparse/svgp.h"

static void usage(void)
{
    printf("Usage: %s [OPTION]... X [Y]\n"
           "Fit a Gaussian process classifier to inputs X (one case per row) and labels Y\n"
           "(numbers or words, one per line) and write the model.  Two classes make a\n"
           "binary problem (the later class is the positive one, so -1/+1 and 0/1 keep\n"
           "their meaning), three or more a multiclass one.  A LIBSVM file X ('label\n"
           "index:value ...', see gpc-formats(5)) holds the labels too: leave Y out.\n"
           "\n"
           "  -k, --kernel=SPEC        covariance function (default ard), e.g. 'ard+bias'\n"
           GPC_CLI_MULTICLASS_HELP
           GPC_CLI_PER_CLASS_HELP
           "  -l, --likelihood=NAME    logistic (default with laplace and two classes),\n"
           "                           probit (default with ep), step (ep only), softmax\n"
           "                           (laplace; the default with three or more classes)\n"
           "                           or mprobit (multinomial probit, vb)\n"
           "  -M, --method=NAME        laplace (default), ep (expectation propagation),\n"
           "                           tap (the same as ep: adaptive TAP), naive (naive\n"
           "                           mean field; no evidence, so -O none), vb\n"
           "                           (variational Bayes, multinomial probit, any classes)\n"
           "                           or svgp (sparse variational: two classes, logistic or\n"
           "                           probit, through inducing inputs)\n"
           "      --inducing=M         with svgp: the number of inducing inputs, started at\n"
           "                           the cases' k-means, seeded with --seed (default 200,\n"
           "                           or the number of cases if fewer)\n"
           "      --inducing-inputs=FILE  with svgp (not --batch): these inducing inputs, a\n"
           "                           matrix of the inputs' columns or an svgp model's\n"
           "      --batch=B            with svgp: fit by minibatches of B cases (natural steps\n"
           "                           for the approximation, Adam for the hyperparameters\n"
           "                           and the inducing inputs) instead of all cases at once\n"
           "      --epochs=E           with --batch: passes over the cases (default 20)\n"
           "      --learning-rate=LR   with --batch: Adam's first step size (default 0.01;\n"
           "                           it shrinks as the natural step does)\n"
           "      --natural-step=RHO   with --batch: the first natural step's size, in (0, 1]\n"
           "                           (default 0.2; it shrinks as 1/sqrt(epochs so far))\n"
           "      --fix-inducing       with svgp: keep the inducing inputs where k-means\n"
           "                           (or --inducing-inputs) put them; otherwise they move\n"
           "                           with the hyperparameters\n"
           "      --checkpoint=FILE    with --batch: the whole state after every epoch and\n"
           "                           when stopped; a run given an existing FILE continues\n"
           "                           from it and ends as an uninterrupted run would\n"
           "  -T, --time-limit=SEC     with --batch: stop after the step running when SEC\n"
           "                           seconds have passed, with the checkpoint written\n"
           "      --validation=FILE    with --batch: held-out inputs whose errors and mean log\n"
           "                           predictive probability the epochs' lines report\n"
           "      --validation-labels=FILE  their labels\n"
           "      --validate-every=K   with --validation: every K epochs (default 1)\n"
           "      --damping=D          with ep or naive: damped updates, 0 < D <= 1 (default 1;\n"
           "                           nested EP, with three or more classes: 0.8)\n"
           "      --label-noise=HOW    with ep or naive: probability that a label is flipped:\n"
           "                           a number in [0, 0.5) (default 0); with ep also em\n"
           "                           (learnt by EM, -l step) or select (0 or em, the one\n"
           "                           with the higher evidence)\n"
           "      --tol=T              with ep: stop when no site moves by more than T,\n"
           "                           relative; with vb: when no sweep would move a latent\n"
           "                           mean by more than T (default 1e-9 for both); with\n"
           "                           svgp: when a step raises the bound by at most T,\n"
           "                           relative (default 1e-10)\n"
           "      --objective=WHAT     with vb: what chooses the hyperparameters and is\n"
           "                           written as log_evidence: laplace (default; the Laplace\n"
           "                           evidence of the multinomial probit model at the\n"
           "                           variational mode, O((Cn)^3)) or bound (the\n"
           "                           variational bound, which prefers weak kernels)\n"
           "  -p, --params=LIST        starting hyperparameters: name=value,... or all values\n"
           "  -H, --params-file=FILE   starting hyperparameters from 'name value' lines\n"
           "  -O, --optimize=HOW       ml (type-II maximum likelihood, default), map (maximum\n"
           "                           a posteriori under the prior), none (keep them) or,\n"
           "                           with vb, is (posterior means by importance sampling)\n"
           "      --samples=S          with -O is: prior draws per update (default 1000)\n"
           "      --prior-mean=M       mean of the Gaussian prior on each log\n"
           "                           hyperparameter (default -3)\n"
           "      --prior-sd=S         its standard deviation (default 3)\n"
           "      --fix=NAMES          keep these hyperparameters (comma-separated) as given\n"
           "  -R, --restarts=N         further optimiser starts from perturbed points (default 0)\n"
           "  -S, --seed=N             seed for the perturbations, the draws or the inducing\n"
           "                           inputs (default 1)\n"
           "      --max-iter=N         optimiser iterations per start (default 500)\n"
           "  -m, --model=FILE         write the model here (default: standard output)\n"
           "  -P, --params-out=FILE    also write the fitted hyperparameters as 'name value'\n"
           "  -v, --verbose            a progress line for every optimiser iteration; twice,\n"
           "                           also every evaluation (point, value, seconds) and\n"
           "                           nested EP run; three times, nested EP's sweeps\n"
           GPC_CLI_HEADER_HELP
           GPC_CLI_LABEL_COLUMN_HELP
           GPC_CLI_PROCESS_GRID_HELP
           "  -q, --quiet              no progress lines\n"
           "  -h, --help               show this help and exit\n"
           "  -V, --version            show the version and exit\n"
           "\n"
           "FILE, X or Y '-' is standard input or output.  Exit status: 0 success,\n"
           "1 numerical failure, 2 usage error, 3 input or output error.\n",
           gpc_progname());
    gpc_cli_exit_written(); /* exit 0, or 3 if the help could not be written */
}

enum { OPT_PRIOR_MEAN = 256, OPT_PRIOR_SD, OPT_MAX_ITER, OPT_DAMPING, OPT_LABEL_NOISE, OPT_FIX, OPT_TOL, OPT_OBJECTIVE,
       OPT_SAMPLES,
       OPT_PER_CLASS, OPT_MULTICLASS, OPT_INDUCING, OPT_BATCH, OPT_EPOCHS, OPT_LR, OPT_RHO,
       OPT_FIX_INDUCING, OPT_CHECKPOINT, OPT_VALIDATION, OPT_VALIDATION_LABELS,
       OPT_VALIDATE_EVERY, OPT_INDUCING_INPUTS };

static const struct option long_options[] = {
    {"kernel", required_argument, NULL, 'k'},
    {"likelihood", required_argument, NULL, 'l'},
    {"method", required_argument, NULL, 'M'},
    {"damping", required_argument, NULL, OPT_DAMPING},
    {"label-noise", required_argument, NULL, OPT_LABEL_NOISE},
    {"fix", required_argument, NULL, OPT_FIX},
    {"tol", required_argument, NULL, OPT_TOL},
    {"objective", required_argument, NULL, OPT_OBJECTIVE},
    {"samples", required_argument, NULL, OPT_SAMPLES},
    {"per-class", no_argument, NULL, OPT_PER_CLASS},
    {"inducing", required_argument, NULL, OPT_INDUCING},
    {"inducing-inputs", required_argument, NULL, OPT_INDUCING_INPUTS},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"epochs", required_argument, NULL, OPT_EPOCHS},
    {"learning-rate", required_argument, NULL, OPT_LR},
    {"natural-step", required_argument, NULL, OPT_RHO},
    {"fix-inducing", no_argument, NULL, OPT_FIX_INDUCING},
    {"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
    {"time-limit", required_argument, NULL, 'T'},
    {"validation", required_argument, NULL, OPT_VALIDATION},
    {"validation-labels", required_argument, NULL, OPT_VALIDATION_LABELS},
    {"validate-every", required_argument, NULL, OPT_VALIDATE_EVERY},
    {"multiclass", required_argument, NULL, OPT_MULTICLASS},
    {"params", required_argument, NULL, 'p'},
    {"params-file", required_argument, NULL, 'H'},
    {"optimize", required_argument, NULL, 'O'},
    {"prior-mean", required_argument, NULL, OPT_PRIOR_MEAN},
    {"prior-sd", required_argument, NULL, OPT_PRIOR_SD},
    {"restarts", required_argument, NULL, 'R'},
    {"seed", required_argument, NULL, 'S'},
    {"max-iter", required_argument, NULL, OPT_MAX_ITER},
    {"model", required_argument, NULL, 'm'},
    {"params-out", required_argument, NULL, 'P'},
    GPC_CLI_LABEL_COLUMN_OPTION,
    GPC_CLI_PROCESS_GRID_OPTIONS,
    GPC_CLI_COMMON_OPTIONS};

typedef struct {
    const char *kernel, *lik, *method, *params, *params_file, *how, *model, *params_out;
    const char *fix, *multiclass, *objective;
    double damping, tol;
    int tol_set, per_class, samples_set;
    size_t inducing; /* 0: the method's default */
    const char *inducing_inputs; /* --inducing-inputs FILE, or NULL */
    gpc_minibatch_opts mb; /* --batch and its settings; train.batch 0: not by minibatches */
    const char *mb_option; /* the last option that needs --batch, for the message */
    const char *validation, *validation_labels; /* held-out inputs and labels */
    gpc_robust_opts robust;
    gpc_importance_opts is; /* -O is */
} options;

/* --label-noise: a probability, em or select. */
static void parse_label_noise(const char *arg, gpc_robust_opts *r)
{
    if (strcmp(arg, "em") == 0)
        r->mode = GPC_ROBUST_EM;
    else if (strcmp(arg, "select") == 0)
        r->mode = GPC_ROBUST_SELECT;
    else
        r->eps = gpc_cli_double("--label-noise", arg);
}

/* The minibatch options: with --batch, in range and with what they combine
 * with; without it, absent. */
static void check_minibatch_options(const options *o)
{
    const gpc_minibatch_opts *mb = &o->mb;
    if (!mb->train.batch) {
        if (o->mb_option)
            gpc_cli_usage("%s is for minibatch fits: add --batch (with -M svgp)", o->mb_option);
        return;
    }
    if (!(mb->train.lr > 0))
        gpc_cli_usage("--learning-rate must be positive");
    if (!(mb->train.rho > 0 && mb->train.rho <= 1))
        gpc_cli_usage("--natural-step must be in (0, 1]");
    if (!(mb->time_limit >= 0))
        gpc_cli_usage("--time-limit must not be negative");
    if (strcmp(o->how, "ml") != 0 && strcmp(o->how, "none") != 0)
        gpc_cli_usage("--batch fits by -O ml (or keeps the hyperparameters with -O none), "
                      "not -O %s", o->how);
    if (o->robust.opt.restarts)
        gpc_cli_usage("--restarts are for the full-batch fit; --batch makes one run");
    if (o->inducing_inputs)
        gpc_cli_usage("--inducing-inputs is for the full-batch fit; --batch chooses its own");
    if (!o->validation != !o->validation_labels)
        gpc_cli_usage("--validation and --validation-labels go together");
    if (o->mb.note_every && !o->validation)
        gpc_cli_usage("--validate-every is for --validation");
}

static void parse_options(int argc, char **argv, options *o)
{
    int c;
    gpc_format unused;
    gpc_robust_defaults(&o->robust);
    gpc_train_defaults(&o->mb.train);
    o->mb.train.batch = 0; /* not by minibatches unless --batch says so */
    o->mb.epochs = 20;
    o->mb.note_every = 0; /* 1 once --validation is given */
    while ((c = getopt_long(argc, argv, "k:l:M:p:H:O:R:S:m:P:T:vqhV", long_options, NULL)) != -1) {
        if (gpc_cli_common(c, optarg, &unused))
            continue;
        switch (c) {
        case 'k': o->kernel = optarg; break;
        case OPT_PER_CLASS: o->per_class = 1; break;
        case OPT_MULTICLASS: o->multiclass = optarg; break;
        case OPT_INDUCING:
            o->inducing = (size_t)gpc_cli_long("--inducing", optarg, 1, 1000000000);
            break;
        case OPT_INDUCING_INPUTS: o->inducing_inputs = optarg; break;
        case OPT_BATCH:
            o->mb.train.batch = (size_t)gpc_cli_long("--batch", optarg, 1, 1000000000);
            break;
        case OPT_EPOCHS:
            o->mb.epochs = (uint64_t)gpc_cli_long("--epochs", optarg, 1, 1000000000);
            o->mb_option = "--epochs";
            break;
        case OPT_LR:
            o->mb.train.lr = gpc_cli_double("--learning-rate", optarg);
            o->mb_option = "--learning-rate";
            break;
        case OPT_RHO:
            o->mb.train.rho = gpc_cli_double("--natural-step", optarg);
            o->mb_option = "--natural-step";
            break;
        case OPT_FIX_INDUCING: o->mb.train.fix_inducing = 1; break;
        case OPT_CHECKPOINT: o->mb.checkpoint = optarg, o->mb_option = "--checkpoint"; break;
        case 'T':
            o->mb.time_limit = gpc_cli_double("--time-limit", optarg);
            o->mb_option = "--time-limit";
            break;
        case OPT_VALIDATION: o->validation = optarg, o->mb_option = "--validation"; break;
        case OPT_VALIDATION_LABELS: o->validation_labels = optarg; break;
        case OPT_VALIDATE_EVERY:
            o->mb.note_every = (uint64_t)gpc_cli_long("--validate-every", optarg, 1, 1000000000);
            break;
        case 'l': o->lik = optarg; break;
        case 'M': o->method = optarg; break;
        case OPT_DAMPING: o->damping = gpc_cli_double("--damping", optarg); break;
        case OPT_LABEL_NOISE: parse_label_noise(optarg, &o->robust); break;
        case OPT_FIX: o->fix = optarg; break;
        case OPT_TOL: o->tol = gpc_cli_double("--tol", optarg), o->tol_set = 1; break;
        case OPT_OBJECTIVE: o->objective = optarg; break;
        case OPT_SAMPLES:
            o->is.samples = (size_t)gpc_cli_long("--samples", optarg, 1, 100000000);
            o->samples_set = 1;
            break;
        case 'p': o->params = optarg; break;
        case 'H': o->params_file = optarg; break;
        case 'O': o->how = optarg; break;
        case OPT_PRIOR_MEAN: o->robust.opt.prior_mean = gpc_cli_double("--prior-mean", optarg); break;
        case OPT_PRIOR_SD: o->robust.opt.prior_sd = gpc_cli_double("--prior-sd", optarg); break;
        case 'R': o->robust.opt.restarts = (int)gpc_cli_long("--restarts", optarg, 0, 10000); break;
        case 'S': o->robust.opt.seed = (unsigned long)gpc_cli_long("--seed", optarg, 0, 4294967295L); break;
        case OPT_MAX_ITER:
            o->robust.opt.max_iter = (int)gpc_cli_long("--max-iter", optarg, 0, 1000000);
            break;
        case 'm': o->model = optarg; break;
        case 'P': o->params_out = optarg; break;
        case 'h': usage();
        }
    }
    if (strcmp(o->how, "ml") && strcmp(o->how, "map") && strcmp(o->how, "none") &&
        strcmp(o->how, "is"))
        gpc_cli_usage("--optimize: '%s' is not ml, map, none or is", o->how);
    if (o->samples_set && strcmp(o->how, "is") != 0)
        gpc_cli_usage("--samples is for -O is");
    o->is.seed = o->robust.opt.seed;
    if (o->robust.opt.prior_sd <= 0)
        gpc_cli_usage("--prior-sd must be positive");
    o->robust.opt.use_prior = strcmp(o->how, "map") == 0;
    o->robust.optimize = strcmp(o->how, "none") != 0 && strcmp(o->how, "is") != 0;
    check_minibatch_options(o);
}

/* How the hyperparameters and the label noise were chosen, for the model. */
static void describe_fit(const options *o, gpc_method method, char *buf, size_t size)
{
    const gpc_optimize_opts *opt = &o->robust.opt;
    int len = opt->use_prior ? snprintf(buf, size, "map normal %.17g %.17g", opt->prior_mean,
                                        opt->prior_sd)
              : strcmp(o->how, "is") == 0
                  ? snprintf(buf, size, "is exponential gamma %g %g samples %zu seed %lu",
                             o->is.shape, o->is.rate, o->is.samples, o->is.seed)
                  : snprintf(buf, size, "%s", o->how);
    if (o->robust.mode != GPC_ROBUST_FIXED && len >= 0 && (size_t)len < size)
        len += snprintf(buf + len, size - (size_t)len, ", label noise by %s",
                        o->robust.mode == GPC_ROBUST_EM ? "em" : "select");
    if (method == GPC_METHOD_VB && len >= 0 && (size_t)len < size)
        snprintf(buf + len, size - (size_t)len, ", %s",
                 o->objective && strcmp(o->objective, "bound") == 0 ? "variational bound"
                                                                     : "laplace evidence");
}

/* An inducing method's inputs move with the hyperparameters unless fixed
 * (by --fix-inducing, or -O none: nothing moves). */
static void move_inducing(gpc_evidence *ev, const options *o)
{
    if (o->mb.train.fix_inducing && !ev->ops->inducing)
        gpc_cli_usage("--fix-inducing applies to -M svgp");
    if (ev->ops->inducing && o->robust.optimize && !o->mb.train.fix_inducing)
        gpc_cli_check(gpc_evidence_set_move_inducing(ev, 1));
}

/* The model and the hyperparameters, both written before either is
 * committed, so that a failure leaves neither (gpc_die removes the
 * temporaries). */
static void write_outputs(const gpc_model *m, gpc_output *model_out, gpc_output *params_out)
{
    gpc_cli_check(gpc_model_write(gpc_output_file(model_out), gpc_output_name(model_out), m));
    gpc_cli_check(gpc_output_flush(model_out));
    if (params_out) {
        gpc_cli_params_write(m->kernel, params_out);
        gpc_cli_check(gpc_output_commit(params_out));
    }
    gpc_cli_check(gpc_output_commit(model_out));
}

/* ---- by minibatches ----------------------------------------------------- */

/* What a checkpoint records of the run: a continued run must match it. */
static void minibatch_settings(gpc_minibatch_opts *mb, const gpc_kernel *k, gpc_rows *rows,
                               gpc_rows *y, gpc_lik lik, const unsigned char *fixed)
{
    gpc_checkpoint_settings *set = &mb->set;
    snprintf(set->likelihood, sizeof set->likelihood, "%s", gpc_lik_name(lik));
    snprintf(set->kernel, sizeof set->kernel, "%s", gpc_kernel_spec(k));
    set->dim = gpc_rows_dim(rows);
    set->cases = gpc_rows_count(rows);
    gpc_cli_check(gpc_rows_hash(rows, y, &set->data_hash));
    set->latent = mb->latent;
    set->batch = mb->train.batch;
    set->seed = mb->train.seed;
    set->rho = mb->train.rho;
    set->lr = mb->train.lr;
    set->fix_inducing = mb->train.fix_inducing;
    size_t len = 0;
    set->fixed[0] = '\0';
    for (size_t j = 0; fixed && j < gpc_kernel_nparams(k); j++)
        if (fixed[j] && len < sizeof set->fixed)
            len += (size_t)snprintf(set->fixed + len, sizeof set->fixed - len, "%s%s",
                                    len ? "," : "", gpc_kernel_param_name(k, j));
    if (!len)
        snprintf(set->fixed, sizeof set->fixed, "-");
}

/* Stopped by a signal: the checkpoint holds the state; end as the signal
 * would have, leaving no model. */
static _Noreturn void minibatch_stopped(const gpc_minibatch_opts *mb, const gpc_train *t,
                                        gpc_output *model_out, gpc_output *params_out)
{
    int sig = gpc_cli_stop_signal();
    gpc_output_abort(model_out);
    if (params_out)
        gpc_output_abort(params_out);
    if (mb->checkpoint)
        gpc_warn("stopped by %s at epoch %llu, step %llu; %s holds the state, and the same "
                 "command continues from it", gpc_cli_signal_name(sig),
                 (unsigned long long)t->epoch, (unsigned long long)t->step, mb->checkpoint);
    else
        gpc_warn("stopped by %s at epoch %llu; without --checkpoint the state is lost",
                 gpc_cli_signal_name(sig), (unsigned long long)t->epoch);
    gpc_cli_end_by_signal(sig);
}

/* The held-out set of --validation, and the model the state makes. */
typedef struct {
    gsl_matrix *X;
    gpc_labels *labels;
    gpc_model *m; /* its method, likelihood and classes */
} validation;

/* "held-out errors 12 of 100 (12.0%), mean log predictive probability
 * -0.3212" for the model the trainer's state t makes. */
static void validation_note(void *ctx, const gpc_train *t, gpc_kernel *k, char *buf, size_t size)
{
    validation *v = ctx;
    gpc_model m = *v->m;
    size_t n = v->X->size1, C = m.nclasses, errors = 0;
    gpc_kernel_set_params(k, t->theta);
    m.X = t->s->Z;
    m.state = gpc_matrix_alloc(t->s->m, gpc_model_state_columns(&m));
    gpc_svgp_state_get(t->s, m.state);
    gpc_prediction *pr = gpc_prediction_alloc(&m, n);
    double *P = gpc_mallocarray(n * C, sizeof *P);
    int st = gpc_model_predict(&m, v->X, pr);
    for (size_t i = 0; st == GPC_OK && i < n; i++) {
        for (size_t c = 0; c < C; c++) /* binary: p(y = +1) alone */
            P[i * C + c] = C == 2 && pr->prob->size2 == 1
                               ? (c ? gsl_matrix_get(pr->prob, i, 0)
                                    : 1.0 - gsl_matrix_get(pr->prob, i, 0))
                               : gsl_matrix_get(pr->prob, i, c);
        errors += gpc_score_argmax(P + i * C, C) != v->labels->cls[i];
    }
    if (st == GPC_OK)
        snprintf(buf, size, "held-out errors %zu of %zu (%.1f%%), mean log predictive "
                 "probability %.4f", errors, n, 100.0 * (double)errors / (double)n,
                 gpc_score_mean_log(P, n, C, v->labels->cls));
    else
        snprintf(buf, size, "held-out predictions failed: %s", gpc_errmsg());
    free(P);
    gpc_prediction_free(pr);
    gsl_matrix_free(m.state);
}

/* Fit -M svgp by minibatches and write the model. */
static void fit_minibatch(options *o, gpc_kernel *k, const gpc_train_data *data, gpc_model *m,
                          unsigned char *fixed, gpc_output *model_out, gpc_output *params_out)
{
    gpc_rows *rows = data->rows;
    gpc_minibatch_opts *mb = &o->mb;
    size_t p = gpc_kernel_nparams(k);
    uint64_t n = gpc_rows_count(rows);
    unsigned char *all = NULL;
    if (!o->robust.optimize) { /* -O none: q alone moves */
        all = gpc_malloc(p ? p : 1);
        memset(all, 1, p ? p : 1);
        fixed = all;
    }
    mb->train.seed = o->robust.opt.seed;
    mb->train.fixed = fixed;
    if (mb->train.batch > n)
        mb->train.batch = (size_t)n;
    mb->inducing = o->inducing ? o->inducing : 200;
    /* no values given, and some to fit: start the length scales at the
     * data's scale, which the small steps of a minibatch fit would take
     * long to reach from 1 */
    mb->start_scales = !o->params && !o->params_file && o->robust.optimize;
    mb->stop = gpc_cli_stop_signal;
    mb->latent = gpc_model_latent(m);
    minibatch_settings(mb, k, rows, data->labels, m->lik, fixed);
    gpc_info(1, "fitting '%s' and q on %llu inducing inputs to %llu cases by minibatches of "
             "%zu, %llu epochs", gpc_kernel_spec(k),
             (unsigned long long)(mb->inducing < n ? mb->inducing : n), (unsigned long long)n,
             mb->train.batch, (unsigned long long)mb->epochs);
    gpc_cli_catch_stop_signals();
    validation v = {NULL, NULL, m};
    if (o->validation) {
        v.X = gpc_cli_read_inputs_for(o->validation, m->colnames, gpc_rows_dim(rows),
                                      "validation inputs");
        gpc_cli_check(gpc_labels_read_classes(o->validation_labels, m->classes, m->nclasses,
                                              &v.labels));
        if (v.labels->n != v.X->size1)
            gpc_die(GPC_EINPUT, "%s has %zu labels but %s has %zu rows; they must match",
                    gpc_cli_name(o->validation_labels), v.labels->n,
                    gpc_cli_name(o->validation), v.X->size1);
        mb->note = validation_note;
        mb->note_ctx = &v;
        mb->note_every = mb->note_every ? mb->note_every : 1;
    }
    gpc_shard_mprobit mp = {NULL};
    gpc_lse_work *lse = NULL;
    mb->lik = (gpc_svgp_lik){gpc_shard_binary_lik, &m->lik};
    if (m->lik == GPC_LIK_MPROBIT) {
        mp.rule = gpc_mprobit_rule_alloc(m->nclasses);
        mb->lik = (gpc_svgp_lik){gpc_shard_mprobit_lik, &mp};
    } else if (m->lik == GPC_LIK_SOFTMAX) {
        lse = gpc_lse_work_alloc(m->nclasses);
        mb->lik = (gpc_svgp_lik){gpc_shard_softmax_lik, lse};
    }
    gpc_minibatch_result r;
    gpc_cli_check(gpc_minibatch_fit(k, data, mb, &r));
    gpc_mprobit_rule_free(mp.rule);
    gpc_lse_work_free(lse);
    gpc_train *t = r.train;
    if (r.stopped)
        minibatch_stopped(mb, t, model_out, params_out);
    if (r.timed_out)
        gpc_info(1, "time limit reached at epoch %llu of %llu: the model is of the state "
                 "reached%s", (unsigned long long)t->epoch, (unsigned long long)mb->epochs,
                 mb->checkpoint ? ", and the same command continues from the checkpoint" : "");
    gpc_info(1, "bound %.10g on the log evidence over all %llu cases, after %llu epochs "
             "(%llu steps)", r.bound, (unsigned long long)n, (unsigned long long)t->epoch,
             (unsigned long long)t->step);
    if (t->jitter > 0)
        gpc_info(1, "jitter up to %.3g added to the inducing inputs' kernel matrix", t->jitter);
    gpc_kernel_set_params(k, t->theta);
    m->X = t->s->Z;
    m->y = NULL;
    m->log_evidence = r.bound;
    snprintf(m->fit, sizeof m->fit, "%s batch %zu epochs %llu seed %lu",
             o->robust.optimize ? "ml" : "none", mb->train.batch,
             (unsigned long long)t->epoch, o->robust.opt.seed);
    m->state = gpc_matrix_alloc(t->s->m, gpc_model_state_columns(m));
    gpc_svgp_state_get(t->s, m->state);
    write_outputs(m, model_out, params_out);
    gsl_matrix_free(m->state);
    gpc_train_free(t);
    gsl_matrix_free(v.X);
    gpc_labels_free(v.labels);
    free(all);
}

/* gpc-fit -M svgp --batch: the training rows read a batch at a time from a
 * .npy file, else whole, then the fit. */
static void main_minibatch(options *o, int argc, char **argv, gpc_method method, gpc_lik lik,
                           gpc_output *model_out, gpc_output *params_out)
{
    if (!gpc_method_get(method)->inducing)
        gpc_cli_usage("--batch is for -M svgp, not %s", gpc_method_get(method)->title);
    gpc_cli_stream in;
    gpc_cli_stream_open(argc, argv, o->lik != NULL, &method, &lik, &in);
    gpc_kernel *k = in.Xmem ? gpc_cli_class_kernel(o->kernel, o->per_class, in.labels, method,
                                                   in.Xmem, in.names, argv[optind],
                                                   o->params_file, o->params)
                            : gpc_cli_class_kernel_dim(o->kernel, o->per_class, in.labels,
                                                       method, gpc_rows_dim(in.X), in.names,
                                                       argv[optind], o->params_file, o->params);
    if (gpc_kernel_has_gram(k))
        gpc_cli_usage("a gram term's columns hold the similarities to the training cases, "
                      "and the sparse variational method predicts through inducing inputs "
                      "instead: compute the kernel with another term");
    unsigned char *fixed = gpc_cli_fixed_mask(k, o->fix);
    gpc_model m = {.lik = lik, .kernel = k, .nclasses = in.labels->nclasses,
                   .classes = in.labels->names, .colnames = in.names,
                   .zero_based = gpc_cli_training_zero_based()};
    snprintf(m.method, sizeof m.method, "%s", gpc_method_name(method));
    gpc_train_data data = {in.X, in.y};
    fit_minibatch(o, k, &data, &m, fixed, model_out, params_out);
    gpc_cli_stream_close(&in);
    gpc_kernel_free(k);
    free(fixed);
}

/* The warning of a fit that ended before its convergence tests: why it
 * ended, and what to do about that. */
static void warn_unconverged(gpc_stop why)
{
    const char *reason =
        why == GPC_STOP_NO_ASCENT
            ? "no step raised the objective, which is flat or rough to its computed precision "
              "there (as nested EP's evidence is at large signal variances)"
        : why == GPC_STOP_WALL ? "it was pressed against hyperparameters where the objective "
                                 "cannot be evaluated"
                               : "its iterations were used up";
    const char *advice = why == GPC_STOP_NO_ASCENT ? "a prior, -O map, keeps the "
                                                     "hyperparameters where it is smooth"
                         : why == GPC_STOP_WALL    ? "try --restarts or -O map"
                                                   : "try --max-iter";
    gpc_warn("the fit stopped before its convergence tests were met: %s; the result may be "
             "short of the optimum (%s)", reason, advice);
}

int main(int argc, char **argv)
{
    options o = {.kernel = "ard", .method = "laplace", .how = "ml", .model = "-", .damping = NAN};
    gpc_cli_init(argc, argv);
    gpc_importance_opts_default(&o.is);
    parse_options(argc, argv, &o);
    gpc_method method;
    gpc_lik lik;
    gpc_cli_method(o.method, o.lik, &method, &lik);
    const gpc_method_ops *ops = gpc_method_get(method);
    if (!ops->has_evidence && o.robust.optimize)
        gpc_cli_usage("%s gives no evidence to optimise: add -O none (choose the "
                      "hyperparameters e.g. by the leave-one-out error, gpc-predict --loo)",
                      ops->title);
    if (!ops->has_evidence && o.robust.mode != GPC_ROBUST_FIXED)
        gpc_cli_usage("--label-noise=em and select need -M ep");
    if (!strcmp(o.how, "is") && method != GPC_METHOD_VB)
        gpc_cli_usage("-O is (Girolami & Rogers' importance sampler) is for -M vb, not %s",
                      ops->title);
    if (!strcmp(o.how, "is") && (o.fix || o.robust.mode != GPC_ROBUST_FIXED))
        gpc_cli_usage("-O is samples every hyperparameter: --fix and label noise do not apply");
    gpc_cli_stdin_claim("-H", o.params_file);
    gpc_cli_stdin_claim("--inducing-inputs", o.inducing_inputs);
    gpc_cli_stdin_claim_training(argc, argv);
    gpc_output *model_out = gpc_cli_output(o.model);
    gpc_output *params_out = o.params_out ? gpc_cli_output(o.params_out) : NULL;
    if (o.mb.train.batch) {
        main_minibatch(&o, argc, argv, method, lik, model_out, params_out);
        return 0;
    }
    gsl_matrix *X;
    gpc_labels *labels;
    char **names;
    gpc_cli_read_training(argc, argv, &X, &names, &labels);
    int zero_based = gpc_cli_training_zero_based();
    gsl_vector *y = gpc_cli_class_vector(labels, o.lik != NULL, o.multiclass, &method, &lik);
    gpc_kernel *k = gpc_cli_class_kernel(o.kernel, o.per_class, labels, method, X, names,
                                         argv[optind], o.params_file, o.params);

    size_t p = gpc_kernel_nparams(k);
    double *theta = gpc_malloc(p * sizeof *theta);
    memcpy(theta, gpc_kernel_params(k), p * sizeof *theta);
    unsigned char *fixed = gpc_cli_fixed_mask(k, o.fix);
    o.robust.opt.fixed = fixed;
    o.robust.opt.kernel = k;
    gpc_evidence *ev = gpc_cli_evidence(k, X, y, labels->nclasses, lik, method,
                                        o.robust.optimize);
    gpc_cli_damping(ev, o.damping);
    gpc_cli_inducing(ev, k, o.inducing, o.inducing_inputs, names, o.robust.opt.seed);
    move_inducing(ev, &o);
    gpc_cli_label_noise(ev, o.robust.eps);
    if (o.tol_set && gpc_evidence_set_tol(ev, o.tol) != GPC_OK)
        gpc_cli_usage("%s", gpc_errmsg());
    gpc_cli_objective(ev, o.objective, strcmp(o.how, "none") != 0);
    if (!strcmp(o.how, "is"))
        gpc_warn("importance sampling weighs the draws as the variational bound does (by the "
                 "fit's E[y] under N(0, I + K)), so it too prefers weak kernels; -O ml or map on "
                 "the Laplace evidence does not");
    if (o.robust.optimize)
        gpc_info(1, "fitting %zu hyperparameters of '%s' to %zu cases (%s)", p,
                 gpc_kernel_spec(k), X->size1, o.robust.opt.use_prior ? "MAP" : "type-II ML");
    gpc_robust_result res = {0};
    int st;
    if (!strcmp(o.how, "is")) {
        gpc_info(1, "posterior means of %zu hyperparameters of '%s' by importance sampling "
                 "(%zu draws per update)", p, gpc_kernel_spec(k), o.is.samples);
        gpc_importance_result ir;
        st = gpc_importance_fit(ev, k, X, labels->nclasses, &o.is, theta, &ir);
        res.log_evidence = ir.bound;
        res.converged = ir.converged;
        res.stop = ir.converged ? GPC_STOP_CONVERGED : GPC_STOP_ITERATIONS;
    } else {
        st = gpc_robust_fit(ev, theta, &o.robust, &res);
    }
    if (st == GPC_EUSAGE)
        gpc_cli_usage("%s", gpc_errmsg());
    gpc_cli_check(st);
    if (!res.converged)
        warn_unconverged(res.stop);
    gpc_kernel_set_params(k, theta);

    /* an inducing method's model keeps its inducing inputs in place of the cases */
    const gsl_matrix *Z = gpc_evidence_inducing_inputs(ev);
    gpc_model m = {.lik = lik, .label_noise = res.eps, .kernel = k,
                   .log_evidence = res.log_evidence, .X = Z ? (gsl_matrix *)Z : X,
                   .y = Z ? NULL : y, .nclasses = labels->nclasses, .classes = labels->names,
                   .colnames = names, .zero_based = zero_based};
    snprintf(m.method, sizeof m.method, "%s", gpc_method_name(method));
    m.state = gpc_matrix_alloc(m.X->size1, gpc_model_state_columns(&m));
    gpc_evidence_state(ev, m.state);
    describe_fit(&o, method, m.fit, sizeof m.fit);
    gpc_evidence_report(ev, res.log_evidence);
    gpc_cli_report_weights(k);
    if (o.robust.mode != GPC_ROBUST_FIXED)
        gpc_info(1, "label noise %.8g after %d EM iterations", res.eps, res.em_iterations);
    write_outputs(&m, model_out, params_out);

    gsl_matrix_free(m.state);
    gpc_evidence_free(ev);
    gpc_kernel_free(k);
    gsl_matrix_free(X);
    gpc_colnames_free(names);
    gsl_vector_free(y);
    gpc_labels_free(labels);
    free(theta);
    free(fixed);
    return 0;
}
