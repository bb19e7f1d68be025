/* gpc-cv — k-fold cross-validation of a classifier: gpc-fit and gpc-predict
 * on every fold (several at a time with -j), the out-of-fold predictions
 * pooled in the cases' order.
 *
 * A C tool rather than a script because it shares what the others do: the
 * readers, the fold assignment and the cutting of files (folds.c), the
 * options, messages and exit statuses, and an output that appears whole or
 * not at all.  X and Y are read once and checked whole before any fold is
 * cut from them, so that either may be a pipe and every input error names
 * the user's file and line.  The folds' files live in a private temporary
 * directory that is removed on every exit: normal, error, or a signal, which
 * is first passed on to the running tools (each fold runs in a process group
 * of its own) and waited for, so that nothing they write is left behind. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/progress.h"
#include "cli/cli.h"
#include "io/colnames.h"
#include "io/labels.h"
#include "io/libsvm.h"
#include "io/matio.h"
#include "report/folds.h"

_Noreturn static void usage(void)
{
    printf("Usage: %s [OPTION]... X [Y] [-- FIT-OPTION...]\n"
           "Cross-validate a classifier on inputs X and labels Y (a LIBSVM file X holds\n"
           "both): for each fold, fit with gpc-fit and the FIT-OPTIONs on the other folds\n"
           "and predict the fold with gpc-predict.  Writes the out-of-fold predictions\n"
           "of every case in the order of Y, as gpc-predict writes them, so that\n"
           "'gpc-score PRED Y' scores the whole cross-validation.  Progress goes to\n"
           "standard error; a fold's messages are shown if it fails (all with -v).\n"
           "\n"
           "  -K, --folds=K            number of folds (default 10), stratified as\n"
           "                           gpc-folds makes them\n"
           "  -S, --seed=N             random seed of the folds (default 1)\n"
           "      --no-stratify        plain k-fold\n"
           "  -f, --fold-file=FILE     take the folds from FILE instead (gpc-folds'\n"
           "                           output, or any fold numbers, one row per case)\n"
           "  -c, --column=C           with -f: the folds are column C of FILE (default 1)\n"
           "  -s, --scale              standardise the inputs of each fold with gpc-scale,\n"
           "                           by the statistics of its training side\n"
           "  -p, --predict-option=ARG pass ARG to gpc-predict (once per argument, e.g.\n"
           "                           -p --columns=p)\n"
           "  -j, --jobs=J             run J folds at a time (default 1); each tool then\n"
           "                           runs on one thread unless OMP_NUM_THREADS says\n"
           "      --per-fold=FILE      write each fold's scores here: a line\n"
           "                           '# fold errors cases rate mlpp brier', then one\n"
           "                           row per fold, as 'gpc-score -t' scores it (four\n"
           "                           decimals)\n"
           "      --precise            the per-fold scores with 17 significant digits\n"
           "                           ('gpc-score --precise -t')\n"
           "  -o, --output=FILE        write the predictions here (default: standard output)\n"
           GPC_CLI_HEADER_HELP
           GPC_CLI_LABEL_COLUMN_HELP
           "                           (passed on to the tools)\n"
           "  -q, --quiet              no progress messages\n"
           "  -v, --verbose            the tools' messages of every fold too\n"
           "  -h, --help               show this help and exit\n"
           "  -V, --version            show the version and exit\n"
           "\n"
           "Exit status: 0 success; 1, 2 or 3 as the tool that failed (1 numerical\n"
           "failure, 2 usage error, e.g. in a FIT-OPTION, 3 input or output error).\n",
           gpc_progname());
    gpc_cli_exit_written(); /* exit 0, or 3 if the help could not be written */
}

enum { OPT_NO_STRATIFY = 256, OPT_PER_FOLD, OPT_PRECISE };

static const struct option long_options[] = {
    {"folds", required_argument, NULL, 'K'},
    {"seed", required_argument, NULL, 'S'},
    {"no-stratify", no_argument, NULL, OPT_NO_STRATIFY},
    {"fold-file", required_argument, NULL, 'f'},
    {"column", required_argument, NULL, 'c'},
    {"scale", no_argument, NULL, 's'},
    {"predict-option", required_argument, NULL, 'p'},
    {"jobs", required_argument, NULL, 'j'},
    {"per-fold", required_argument, NULL, OPT_PER_FOLD},
    {"precise", no_argument, NULL, OPT_PRECISE},
    {"output", required_argument, NULL, 'o'},
    GPC_CLI_LABEL_COLUMN_OPTION,
    GPC_CLI_COMMON_OPTIONS};

typedef struct {
    long K, column, jobs;
    unsigned long seed;
    int stratify, scale, assign_opt, precise;
    const char *fold_file, *out, *per_fold, *header_opt;
    const char *xpath, *ypath;   /* ypath NULL: X is a LIBSVM file */
    char **fit_args, **predict_args;
    size_t nfit, npredict;
} options;

/* ---- options --------------------------------------------------------- */

/* argv up to the first "--" is gpc-cv's; what follows is gpc-fit's. */
static int split_fit_args(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            o->fit_args = argv + i + 1;
            o->nfit = (size_t)(argc - i - 1);
            return i;
        }
    return argc;
}

static void parse(int argc, char **argv, options *o)
{
    *o = (options){.K = 10, .column = 1, .jobs = 1, .seed = 1, .stratify = 1, .out = "-"};
    int own = split_fit_args(argc, argv, o), c;
    gpc_format fmt = GPC_FMT_TEXT;
    o->predict_args = gpc_mallocarray((size_t)argc + 1, sizeof *o->predict_args);
    while ((c = getopt_long(own, argv, "K:S:f:c:sp:j:o:vqhV", long_options, NULL)) != -1) {
        if (c == GPC_CLI_OPT_HEADER || c == GPC_CLI_OPT_NO_HEADER)
            o->header_opt = c == GPC_CLI_OPT_HEADER ? "--header" : "--no-header";
        if (gpc_cli_common(c, optarg, &fmt))
            continue;
        switch (c) {
        case 'K': o->K = gpc_cli_long("--folds", optarg, 2, 100000000L); o->assign_opt = 1; break;
        case 'S':
            o->seed = (unsigned long)gpc_cli_long("--seed", optarg, 0, 4294967295L);
            o->assign_opt = 1;
            break;
        case OPT_NO_STRATIFY: o->stratify = 0; o->assign_opt = 1; break;
        case 'f': o->fold_file = optarg; break;
        case 'c': o->column = gpc_cli_long("--column", optarg, 1, 1000); break;
        case 's': o->scale = 1; break;
        case 'p': o->predict_args[o->npredict++] = optarg; break;
        case 'j': o->jobs = gpc_cli_long("--jobs", optarg, 1, 1024); break;
        case OPT_PER_FOLD: o->per_fold = optarg; break;
        case OPT_PRECISE: o->precise = 1; break;
        case 'o': o->out = optarg; break;
        case 'h': usage();
        }
    }
    int nargs = own - optind;
    if (nargs < 1 || nargs > 2)
        gpc_cli_usage("expected X and Y (or one LIBSVM file), then -- and gpc-fit's options");
    o->xpath = argv[optind];
    o->ypath = nargs == 2 ? argv[optind + 1] : NULL;
    gpc_cli_stdin_claim("X", o->xpath);
    gpc_cli_stdin_claim("Y", o->ypath);
    gpc_cli_stdin_claim("--fold-file", o->fold_file);
    if (o->fold_file && o->assign_opt)
        gpc_cli_usage("-K, -S and --no-stratify make folds; with --fold-file they come from "
                      "the file");
    if (o->column != 1 && !o->fold_file)
        gpc_cli_usage("--column needs --fold-file");
    if (o->per_fold && strcmp(o->per_fold, "-") == 0 && strcmp(o->out, "-") == 0)
        gpc_cli_usage("--per-fold=- needs the predictions elsewhere (-o FILE)");
}

/* ---- the inputs ----------------------------------------------------------- */

/* X and Y, each read once (so that either may be a pipe) and checked whole
 * by the readers every tool uses, so that their errors name the user's
 * file and line, never a fold's.  The folds are cut from these. */
typedef struct {
    gsl_matrix *X;      /* all columns: a LIBSVM file's up to its largest index */
    char **colnames;    /* X's columns' names, or NULL */
    const char *xname;
    gpc_labels *labels;
    char *ytext;        /* Y as read (a LIBSVM X alone: X's text), cut line by line */
    size_t ylen;
    const char *yname;
} inputs;

/* A LIBSVM file X alone: the features and the labels from one reading. */
static void read_libsvm(const char *path, inputs *in)
{
    gpc_cli_check(gpc_input_read_all(path, &in->ytext, &in->ylen, &in->yname));
    if (!gpc_libsvm_is(in->ytext, in->ylen))
        gpc_cli_usage("%s is not a LIBSVM file ('label index:value ...'), so the labels are "
                      "needed too: give X Y", in->yname);
    gpc_source src = {.line = NULL};
    snprintf(src.name, sizeof src.name, "%s", in->yname);
    char **tok;
    gpc_cli_check(gpc_libsvm_read(in->ytext, in->ylen, &src, &in->X, &tok));
    in->labels = gpc_labels_of_tokens(tok, src.rows);
    gpc_libsvm_labels_free(tok, src.rows);
    gpc_source_free(&src);
}

/* X whose --label-column holds the labels: Y is made of them, one a line,
 * to be cut into the folds' labels files as a Y file would be. */
static void read_labelled(const char *path, inputs *in)
{
    gpc_read_opts opts = {.label_column = gpc_cli_label_column()};
    gpc_source src;
    char **tok;
    gpc_cli_check(gpc_matrix_read_with(path, &opts, &in->X, &src, &tok, NULL));
    in->colnames = src.colnames;
    src.colnames = NULL;
    gpc_source_free(&src);
    size_t n = in->X->size1, len = 0;
    for (size_t i = 0; i < n; i++)
        len += strlen(tok[i]) + 1;
    in->ytext = gpc_malloc(len + 1);
    in->ylen = 0;
    for (size_t i = 0; i < n; i++)
        in->ylen += (size_t)sprintf(in->ytext + in->ylen, "%s\n", tok[i]);
    in->yname = in->xname;
    in->labels = gpc_labels_of_tokens(tok, n);
    gpc_colnames_free(tok);
}

static void read_inputs(const options *o, inputs *in)
{
    *in = (inputs){.xname = gpc_cli_name(o->xpath)};
    if (gpc_cli_label_column() && o->ypath)
        gpc_cli_usage("--label-column=%s takes the labels from a column of X: give X alone, "
                      "without a labels file", gpc_cli_label_column());
    if (gpc_cli_label_column()) {
        read_labelled(o->xpath, in);
        return;
    }
    if (!o->ypath) {
        read_libsvm(o->xpath, in);
        return;
    }
    gpc_source src;
    gpc_cli_check(gpc_matrix_read(o->xpath, &in->X, &src));
    in->colnames = src.colnames;
    src.colnames = NULL;
    gpc_source_free(&src);
    gpc_cli_check(gpc_input_read_all(o->ypath, &in->ytext, &in->ylen, &in->yname));
    gpc_cli_check(gpc_labels_parse(in->ytext, in->ylen, in->yname, &in->labels));
    if (in->labels->n != in->X->size1)
        gpc_die(GPC_EINPUT, "%s has %zu labels but %s has %zu rows; they must match", in->yname,
                in->labels->n, in->xname, in->X->size1);
}

static void inputs_free(inputs *in)
{
    gsl_matrix_free(in->X);
    gpc_colnames_free(in->colnames);
    gpc_labels_free(in->labels);
    free(in->ytext);
}

/* ---- folds --------------------------------------------------------------- */

typedef struct {
    size_t n;         /* cases */
    long *fold;       /* each case's fold number */
    size_t nfolds;
    long *number;     /* the folds' numbers, ascending */
    size_t *size;     /* cases held out in each */
} fold_plan;

static void plan_index(fold_plan *p)
{
    long *sorted = gpc_mallocarray(p->n, sizeof *sorted);
    memcpy(sorted, p->fold, p->n * sizeof *sorted);
    for (size_t i = 1; i < p->n; i++) /* insertion sort: n is small next to the fits */
        for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            long t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    p->number = gpc_mallocarray(p->n, sizeof *p->number);
    p->size = gpc_calloc(p->n, sizeof *p->size);
    p->nfolds = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (i == 0 || sorted[i] != sorted[i - 1])
            p->number[p->nfolds++] = sorted[i];
        p->size[p->nfolds - 1]++;
    }
    free(sorted);
}

static void plan_folds(const options *o, const inputs *in, fold_plan *p)
{
    const gpc_labels *l = in->labels;
    /* refused here, not by each fold's gpc-fit, and before any fold runs */
    gpc_cli_check(gpc_labels_check_training(l, in->yname));
    p->n = l->n;
    p->fold = gpc_mallocarray(p->n, sizeof *p->fold);
    if (o->fold_file) {
        gsl_matrix *F;
        gpc_source src;
        gpc_cli_check(gpc_matrix_read(o->fold_file, &F, &src));
        if ((size_t)o->column > F->size2)
            gpc_cli_usage("--column=%ld, but %s has %zu column%s", o->column, o->fold_file,
                          F->size2, F->size2 == 1 ? "" : "s");
        if (F->size1 != p->n)
            gpc_die(GPC_EINPUT, "%s: %zu rows, but %s has %zu cases; give the folds made for it",
                    gpc_cli_name(o->fold_file), F->size1, in->yname, p->n);
        gpc_cli_check(gpc_folds_column(F, &src, (size_t)o->column - 1, p->fold));
        gsl_matrix_free(F);
        gpc_source_free(&src);
    } else {
        if ((size_t)o->K > p->n)
            gpc_cli_usage("-K %ld is more folds than the %zu cases of %s; use at most %zu", o->K,
                          p->n, in->yname, p->n);
        size_t *f = gpc_mallocarray(p->n, sizeof *f);
        gpc_cli_check(gpc_folds_repeated(o->stratify ? l->cls : NULL, p->n, (size_t)o->K,
                                         o->seed, 1, f));
        for (size_t i = 0; i < p->n; i++)
            p->fold[i] = (long)f[i] + 1;
        free(f);
    }
    plan_index(p);
    if (p->nfolds < 2)
        gpc_cli_usage("%s: every case is in fold %ld; cross-validation needs two folds or more",
                      gpc_cli_name(o->fold_file), p->number[0]);
}

/* ---- the temporary directory and signals ------------------------------- */

static char tmpdir[4096];
static pid_t *workers;  /* running folds' process groups (0: free slot) */
static long nworkers;
static volatile sig_atomic_t caught;
static gpc_output *pred_out, *fold_out;

static void remove_tmpdir(void)
{
    if (!tmpdir[0])
        return;
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    char path[4400];
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(tmpdir);
    tmpdir[0] = '\0';
}

/* Stop the running folds and wait for them, so that none writes into the
 * directory after it is gone. */
static void stop_workers(void)
{
    for (long w = 0; w < nworkers; w++)
        if (workers[w] > 0)
            kill(-workers[w], SIGTERM);
    for (long w = 0; w < nworkers; w++)
        if (workers[w] > 0) {
            while (waitpid(workers[w], NULL, 0) < 0 && errno == EINTR)
                ;
            workers[w] = 0;
        }
}

static void cleanup(void)
{
    stop_workers();
    remove_tmpdir();
}

static void on_signal(int sig)
{
    caught = sig;
    for (long w = 0; w < nworkers; w++)
        if (workers[w] > 0)
            kill(-workers[w], SIGTERM);
}

static const int handled_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

static void catch_signals(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof handled_signals / sizeof *handled_signals; i++)
        sigaction(handled_signals[i], &sa, NULL);
}

/* After a signal: clean up, then die of it as the default action would. */
static void check_signal(void)
{
    if (!caught)
        return;
    int sig = caught;
    cleanup();
    if (pred_out)
        gpc_output_abort(pred_out);
    if (fold_out)
        gpc_output_abort(fold_out);
    signal(sig, SIG_DFL);
    raise(sig);
    _exit(128 + sig);
}

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/gpc-cv.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        int e = errno;
        tmpdir[0] = '\0';
        gpc_die(GPC_EINPUT, "cannot make a temporary directory in %s: %s (set TMPDIR to a "
                "writable directory)", base && *base ? base : "/tmp", strerror(e));
    }
}

/* The file of fold k called what ("X-train", "model") in the directory. */
static char *fold_path(size_t k, const char *what)
{
    char *p = gpc_malloc(strlen(tmpdir) + strlen(what) + 32);
    sprintf(p, "%s/fold%zu-%s", tmpdir, k + 1, what);
    return p;
}

/* ---- cutting the files ----------------------------------------------------- */

static FILE *open_side(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        gpc_die(GPC_EINPUT, "%s: %s", path, strerror(errno));
    return f;
}

static void close_side(FILE *f, char *path, int st)
{
    if (fclose(f) != 0 && st == GPC_OK)
        st = gpc_fail(GPC_EINPUT, "%s: write error (is the temporary directory's disk full?)",
                      path);
    gpc_cli_check(st);
    free(path);
}

/* One side of a fold: X's rows as a matrix of all X's columns, which a
 * LIBSVM file's rows cut apart would not keep (a side without the largest
 * index would be narrower); .npy, or CSV under its header so that a kernel
 * spec may name the columns.  Y's lines as they were. */
static void write_side(const inputs *in, const unsigned char *keep, size_t n, size_t k,
                       int test)
{
    char *path = fold_path(k, test ? "X-test" : "X-train");
    FILE *f = open_side(path);
    gpc_format fmt = in->colnames ? GPC_FMT_TEXT : GPC_FMT_NPY;
    close_side(f, path, gpc_folds_cut_rows(in->X, in->colnames, keep, in->xname, fmt, f,
                                           path));
    path = fold_path(k, test ? "y-test" : "y-train");
    f = open_side(path);
    close_side(f, path, gpc_folds_cut(in->ytext, in->ylen, in->yname, keep, n, 0, GPC_FMT_TEXT,
                                      f, path));
}

/* The training and test side of every fold. */
static void cut_folds(const inputs *in, const fold_plan *p)
{
    unsigned char *keep = gpc_mallocarray(p->n, sizeof *keep);
    for (size_t k = 0; k < p->nfolds; k++)
        for (int side = 0; side < 2; side++) {
            for (size_t i = 0; i < p->n; i++)
                keep[i] = (p->fold[i] == p->number[k]) == (side == 1);
            write_side(in, keep, p->n, k, side);
            check_signal();
        }
    free(keep);
}

/* ---- running a fold ------------------------------------------------------------ */

/* Where the other tools are: beside this one when it is there (the build
 * tree's bin/, an install's bin/), else on PATH. */
static char tool_dir[4096];

static void find_tools(void)
{
    ssize_t len = readlink("/proc/self/exe", tool_dir, sizeof tool_dir - 1);
    tool_dir[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(tool_dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        tool_dir[0] = '\0';
    char probe[4200];
    snprintf(probe, sizeof probe, "%sgpc-fit", tool_dir);
    if (!tool_dir[0] || access(probe, X_OK) != 0)
        tool_dir[0] = '\0';
}

typedef struct {
    const char *file; /* the program's path; argv[0] is its name, for its messages */
    char *argv[64 + 1024];
    size_t argc;
} command;

static void arg(command *c, const char *a)
{
    if (c->argc + 1 < sizeof c->argv / sizeof *c->argv)
        c->argv[c->argc++] = (char *)a;
    c->argv[c->argc] = NULL;
}

static void tool(command *c, const char *name, const options *o)
{
    static char path[8][4200];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s%s", tool_dir, name);
    c->file = p;
    c->argc = 0;
    arg(c, name);
    if (o->header_opt)
        arg(c, o->header_opt);
}

static volatile sig_atomic_t worker_stop;
static void on_worker_signal(int sig) { worker_stop = sig; }

/* Run one command in the fold's worker, its standard output to out_path
 * (NULL: the log, which is standard error); its exit status, or 128 plus
 * the signal that ended it. */
static int run(command *c, const char *out_path)
{
    if (worker_stop)
        return 128 + worker_stop;
    pid_t pid = fork();
    if (pid < 0)
        return 126;
    if (pid == 0) {
        int fd = out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600) : 2;
        if (fd < 0 || dup2(fd, 1) < 0)
            _exit(126);
        execvp(c->file, c->argv);
        fprintf(stderr, "%s: cannot run %s: %s\n", gpc_progname(), c->argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return 126;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The fold's work, in its own process: scale, fit, predict, score. */
_Noreturn static void fold_worker(const options *o, size_t k)
{
    catch_signals(on_worker_signal);
    char *log = fold_path(k, "log");
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 2) < 0)
        _exit(126);
    if (o->jobs > 1 && !getenv("OMP_NUM_THREADS")) {
        /* threads of several folds fighting over the cores slow all down */
        setenv("OMP_NUM_THREADS", "1", 1);
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
    }
    char *x_train = fold_path(k, "X-train"), *x_test = fold_path(k, "X-test");
    char *model = fold_path(k, "model"), *pred = fold_path(k, "pred");
    char *stats = fold_path(k, "stats"), *sc_train = fold_path(k, "Xs-train");
    char *sc_test = fold_path(k, "Xs-test"), *y_train = fold_path(k, "y-train");
    char *y_test = fold_path(k, "y-test");
    command c;
    int st = 0;
    if (o->scale) {
        tool(&c, "gpc-scale", o);
        arg(&c, "-s"), arg(&c, stats), arg(&c, "-o"), arg(&c, sc_train), arg(&c, x_train);
        st = run(&c, NULL);
        tool(&c, "gpc-scale", o);
        arg(&c, "-r"), arg(&c, stats), arg(&c, "-o"), arg(&c, sc_test), arg(&c, x_test);
        st = st ? st : run(&c, NULL);
        x_train = sc_train, x_test = sc_test;
    }
    tool(&c, "gpc-fit", o);
    for (size_t i = 0; i < o->nfit; i++)
        arg(&c, o->fit_args[i]);
    arg(&c, "-m"), arg(&c, model), arg(&c, x_train), arg(&c, y_train);
    st = st ? st : run(&c, NULL);
    tool(&c, "gpc-predict", o);
    arg(&c, "-m"), arg(&c, model);
    for (size_t i = 0; i < o->npredict; i++)
        arg(&c, o->predict_args[i]);
    arg(&c, "-o"), arg(&c, pred), arg(&c, x_test);
    st = st ? st : run(&c, NULL);
    if (o->per_fold) {
        char *score = fold_path(k, "score");
        tool(&c, "gpc-score", o);
        if (o->precise)
            arg(&c, "--precise");
        arg(&c, "-t"), arg(&c, "-m"), arg(&c, model), arg(&c, pred), arg(&c, y_test);
        st = st ? st : run(&c, score);
    }
    _exit(st);
}

/* ---- the folds side by side -------------------------------------------------------- */

/* Copy a fold's log to standard error, each line under the fold's name. */
static void show_log(size_t k, const fold_plan *p)
{
    char *log = fold_path(k, "log"), line[4096];
    FILE *f = fopen(log, "r");
    while (f && fgets(line, sizeof line, f))
        fprintf(stderr, "  fold %ld: %s%s", p->number[k], line,
                line[strlen(line) - 1] == '\n' ? "" : "\n");
    if (f)
        fclose(f);
    free(log);
}

static void fold_failed(size_t k, const fold_plan *p, int st)
{
    stop_workers();
    gpc_warn("fold %ld (%zu of %zu) failed%s; its messages:", p->number[k], k + 1, p->nfolds,
             st == 127 || st == 126 ? " (a tool could not be run)" : "");
    show_log(k, p);
    gpc_die(st >= 1 && st <= 3 ? st : GPC_EINPUT, "cross-validation stopped at fold %ld",
            p->number[k]);
}

static void run_folds(const options *o, const fold_plan *p)
{
    nworkers = o->jobs;
    workers = gpc_calloc((size_t)nworkers, sizeof *workers);
    size_t *slot_fold = gpc_calloc((size_t)nworkers, sizeof *slot_fold), next = 0, done = 0;
    gpc_progress clock;
    gpc_progress_start(&clock, "fold", 0, (long)p->nfolds, gpc_progress_clock());
    while (done < p->nfolds) {
        for (long w = 0; w < nworkers && next < p->nfolds; w++) {
            if (workers[w])
                continue;
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0)
                gpc_die(GPC_EINPUT, "cannot start fold %zu: %s", next + 1, strerror(errno));
            if (pid == 0) {
                setpgid(0, 0);
                fold_worker(o, next);
            }
            setpgid(pid, pid);
            workers[w] = pid;
            slot_fold[w] = next++;
        }
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        check_signal();
        if (pid < 0)
            continue;
        for (long w = 0; w < nworkers; w++)
            if (workers[w] == pid) {
                workers[w] = 0;
                int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                if (code != 0)
                    fold_failed(slot_fold[w], p, code);
                done++;
                if (gpc_verbosity >= 2)
                    show_log(slot_fold[w], p);
                char line[256];
                gpc_info(1, "%s", gpc_progress_format(&clock, (long)done, gpc_progress_clock(),
                                                      line, sizeof line));
            }
    }
    free(slot_fold);
}

/* ---- pooling ------------------------------------------------------------------------ */

typedef struct {
    char *text;       /* the fold's prediction file */
    char **rows;      /* its data lines, NUL-terminated in text */
    size_t nrows;
    char *header;     /* its comment lines, joined */
} fold_pred;

static void read_pred(size_t k, fold_pred *fp)
{
    char *path = fold_path(k, "pred");
    size_t len;
    const char *name;
    gpc_cli_check(gpc_input_read_all(path, &fp->text, &len, &name));
    if (len >= 6 && memcmp(fp->text, "\x93NUMPY", 6) == 0)
        gpc_die(GPC_EINPUT, "the folds' predictions are read as text; leave -F out of the "
                "predict options");
    fp->rows = gpc_mallocarray(len / 2 + 1, sizeof *fp->rows);
    fp->header = gpc_calloc(len + 1, 1);
    fp->nrows = 0;
    for (char *s = fp->text; *s;) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        if (s[0] == '#') {
            strcat(fp->header, s);
            strcat(fp->header, "\n");
        } else if (s[0]) {
            fp->rows[fp->nrows++] = s;
        }
        s = nl ? nl + 1 : s + strlen(s);
    }
    free(path);
}

static void pool(const fold_plan *p, FILE *out, const char *outname)
{
    fold_pred *fp = gpc_calloc(p->nfolds, sizeof *fp);
    for (size_t k = 0; k < p->nfolds; k++) {
        read_pred(k, &fp[k]);
        if (fp[k].nrows != p->size[k])
            gpc_die(GPC_EINPUT, "fold %ld: %zu predictions for %zu cases", p->number[k],
                    fp[k].nrows, p->size[k]);
        if (strcmp(fp[k].header, fp[0].header) != 0)
            gpc_die(GPC_EINPUT, "fold %ld's predictions have other columns than fold %ld's "
                    "(its training side lacks a class?), so they cannot be pooled; use "
                    "stratified folds, or fewer", p->number[k], p->number[0]);
    }
    size_t *used = gpc_calloc(p->nfolds, sizeof *used);
    fputs(fp[0].header, out);
    for (size_t i = 0; i < p->n; i++) {
        size_t k = 0;
        while (p->number[k] != p->fold[i])
            k++;
        fprintf(out, "%s\n", fp[k].rows[used[k]++]);
    }
    if (ferror(out))
        gpc_die(GPC_EINPUT, "%s: write error", outname);
    for (size_t k = 0; k < p->nfolds; k++) {
        free(fp[k].text);
        free(fp[k].rows);
        free(fp[k].header);
    }
    free(fp);
    free(used);
}

static void write_scores(const fold_plan *p, FILE *out)
{
    fprintf(out, "# fold errors cases rate mlpp brier\n");
    for (size_t k = 0; k < p->nfolds; k++) {
        char *path = fold_path(k, "score"), line[1024] = "";
        FILE *f = fopen(path, "r");
        if (!f || !fgets(line, sizeof line, f))
            gpc_die(GPC_EINPUT, "fold %ld: no scores from gpc-score", p->number[k]);
        fclose(f);
        fprintf(out, "%ld %s", p->number[k], line);
        free(path);
    }
}

int main(int argc, char **argv)
{
    options o;
    gpc_cli_init(argc, argv);
    parse(argc, argv, &o);
    find_tools();
    pred_out = gpc_cli_output(o.out);
    fold_out = o.per_fold ? gpc_cli_output(o.per_fold) : NULL;
    inputs in;
    read_inputs(&o, &in);
    fold_plan p;
    plan_folds(&o, &in, &p);
    catch_signals(on_signal);
    gpc_on_die(cleanup);
    make_tmpdir();
    cut_folds(&in, &p);
    inputs_free(&in); /* the folds have all they need */
    run_folds(&o, &p);
    pool(&p, gpc_output_file(pred_out), gpc_output_name(pred_out));
    if (fold_out)
        write_scores(&p, gpc_output_file(fold_out));
    check_signal();
    cleanup();
    if (fold_out) {
        gpc_cli_check(gpc_output_flush(fold_out));
        gpc_cli_check(gpc_output_flush(pred_out));
        gpc_cli_check(gpc_output_commit(fold_out));
    }
    gpc_cli_check(gpc_output_commit(pred_out));
    free(p.fold);
    free(p.number);
    free(p.size);
    free(workers);
    free(o.predict_args);
    return 0;
}
