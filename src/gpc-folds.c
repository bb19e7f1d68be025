/* gpc-folds — k-fold cross-validation folds: a stratified, seeded fold
 * number per case, and the rows of a file in or out of one fold.  The
 * numerics are in folds.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "cli/cli.h"
#include "io/colnames.h"
#include "io/labels.h"
#include "io/matio.h"
#include "report/folds.h"

_Noreturn static void usage(void)
{
    printf("Usage: %s [OPTION]... [Y]\n"
           "  or:  %s --select=F --test|--train [OPTION]... FOLDS [FILE]\n"
           "Write a fold number from 1 to K for each case of the labels Y (numbers or words,\n"
           "one per line; default standard input), in Y's order: stratified, so that the\n"
           "fold sizes differ by at most one, and so do each class's counts per fold.\n"
           "The same seed gives the same folds.\n"
           "With --select, write the rows of FILE (default standard input) that fold F of\n"
           "the assignment FOLDS holds out (--test) or trains on (--train): matrix rows\n"
           "(text, CSV or .npy), labels or LIBSVM lines alike.  Text is cut line by line,\n"
           "so rows come out as they were, with comment lines, blank lines and a header\n"
           "line copied to either side; .npy gives .npy unless -F says otherwise.\n"
           "\n"
           "  -K, --folds=K         number of folds (default 10; 2 to the number of cases)\n"
           "  -S, --seed=N          random seed (default 1)\n"
           "  -R, --repeats=R       R columns, each its own shuffle, for repeated\n"
           "                        cross-validation (default 1; column 1 is the same\n"
           "                        for every R)\n"
           "      --no-stratify     plain k-fold: sizes within one, classes by chance\n"
           "  -s, --select=F        cut FILE by fold F of FOLDS (a fold number in FOLDS,\n"
           "                        which may count from 0 or 1)\n"
           "  -t, --test            with --select: the rows in fold F\n"
           "  -T, --train           with --select: the rows not in fold F\n"
           "  -c, --column=C        with --select: the folds are column C of FOLDS\n"
           "                        (default 1), for repeated cross-validation\n"
           "  -o, --output=FILE     write here (default: standard output)\n"
           "  -F, --format=FMT      output format: text or npy (default: text, or with\n"
           "                        --select the format of FILE)\n"
           GPC_CLI_HEADER_HELP
           GPC_CLI_LABEL_COLUMN_HELP
           "  -q, --quiet           no messages except errors\n"
           "  -v, --verbose         more messages\n"
           "  -h, --help            show this help and exit\n"
           "  -V, --version         show the version and exit\n"
           "\n"
           "Exit status: 0 success, 2 usage error, 3 input or output error.\n",
           gpc_progname(), gpc_progname());
    gpc_cli_exit_written(); /* exit 0, or 3 if the help could not be written */
}

enum { OPT_NO_STRATIFY = 256 };

static const struct option long_options[] = {
    {"folds", required_argument, NULL, 'K'},
    {"seed", required_argument, NULL, 'S'},
    {"repeats", required_argument, NULL, 'R'},
    {"no-stratify", no_argument, NULL, OPT_NO_STRATIFY},
    {"select", required_argument, NULL, 's'},
    {"test", no_argument, NULL, 't'},
    {"train", no_argument, NULL, 'T'},
    {"column", required_argument, NULL, 'c'},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'F'},
    GPC_CLI_LABEL_COLUMN_OPTION,
    GPC_CLI_COMMON_OPTIONS};

typedef struct {
    long K, R, select, column;
    unsigned long seed;
    int stratify, side; /* side: 't' test, 'T' train, 0 none */
    int assign_opt;     /* an option of the assignment was given (-K, -S, -R, --no-stratify) */
    const char *out;
    gpc_format fmt;
    int fmt_given;
} options;

static void parse(int argc, char **argv, options *o)
{
    int c;
    *o = (options){.K = 10, .R = 1, .select = -1, .column = 1, .seed = 1, .stratify = 1,
                   .out = "-", .fmt = GPC_FMT_TEXT};
    while ((c = getopt_long(argc, argv, "K:S:R:s:tTc:o:F:vqhV", long_options, NULL)) != -1) {
        if (c == 'F')
            o->fmt_given = 1;
        if (gpc_cli_common(c, optarg, &o->fmt))
            continue;
        switch (c) {
        case 'K': o->K = gpc_cli_long("--folds", optarg, 2, 100000000L); o->assign_opt = 1; break;
        case 'S':
            o->seed = (unsigned long)gpc_cli_long("--seed", optarg, 0, 4294967295L);
            o->assign_opt = 1;
            break;
        case 'R': o->R = gpc_cli_long("--repeats", optarg, 1, 1000); o->assign_opt = 1; break;
        case OPT_NO_STRATIFY: o->stratify = 0; o->assign_opt = 1; break;
        case 's': o->select = gpc_cli_long("--select", optarg, 0, 1000000000L); break;
        case 't':
        case 'T':
            if (o->side && o->side != c)
                gpc_cli_usage("--test and --train cannot be combined; run twice for both sides");
            o->side = c;
            break;
        case 'c': o->column = gpc_cli_long("--column", optarg, 1, 1000); break;
        case 'o': o->out = optarg; break;
        case 'h': usage();
        default: gpc_cli_usage("unknown option");
        }
    }
}

/* Usage errors of option combinations, before any file is read. */
static void check_options(int argc, const options *o)
{
    int nargs = argc - optind;
    if (o->select >= 0) {
        if (!o->side)
            gpc_cli_usage("--select needs --test (the fold's rows) or --train (the others)");
        if (o->assign_opt)
            gpc_cli_usage("-K, -S, -R and --no-stratify make folds; with --select the folds "
                          "come from FOLDS");
        if (nargs < 1 || nargs > 2)
            gpc_cli_usage("--select expects FOLDS and at most one FILE");
    } else {
        if (o->side)
            gpc_cli_usage("--test and --train need --select=F, the fold to cut by");
        if (o->column != 1)
            gpc_cli_usage("--column needs --select");
    }
    if (o->select >= 0 && gpc_cli_label_column())
        gpc_cli_usage("--label-column says where the labels of Y are, to make folds; --select "
                      "cuts any file and takes no --label-column");
    if (o->select < 0) {
        if (nargs > 1)
            gpc_cli_usage("expected at most one labels file Y");
    }
}

/* The labels of Y, or of the --label-column of the data file Y. */
static gpc_labels *read_labels(const char *ypath)
{
    gpc_labels *l;
    if (!gpc_cli_label_column()) {
        gpc_cli_check(gpc_labels_read_present(ypath, &l));
        return l;
    }
    gpc_read_opts opts = {.label_column = gpc_cli_label_column()};
    gsl_matrix *X;
    char **tok;
    gpc_cli_check(gpc_matrix_read_with(ypath, &opts, &X, NULL, &tok, NULL));
    l = gpc_labels_of_tokens(tok, X->size1);
    gpc_colnames_free(tok);
    gsl_matrix_free(X);
    return l;
}

static int make_folds(const char *ypath, const options *o)
{
    gpc_cli_stdin_claim("the labels", ypath);
    gpc_output *out = gpc_cli_output(o->out);
    gpc_labels *l = read_labels(ypath);
    if ((size_t)o->K > l->n)
        gpc_cli_usage("-K %ld is more folds than the %zu cases of %s; use at most %zu", o->K,
                      l->n, gpc_cli_name(ypath), l->n);
    size_t R = (size_t)o->R;
    size_t *fold = gpc_mallocarray(l->n * R, sizeof *fold);
    gpc_cli_check(gpc_folds_repeated(o->stratify ? l->cls : NULL, l->n, (size_t)o->K, o->seed,
                                     R, fold));
    gsl_matrix *F = gpc_matrix_alloc(l->n, R);
    for (size_t i = 0; i < l->n * R; i++)
        F->data[i] = (double)(fold[i] + 1); /* n x R, row-major as fold is */
    gpc_info(2, "%zu cases of %zu classes in %ld folds%s", l->n, l->nclasses, o->K,
             o->stratify ? ", stratified" : "");
    gpc_cli_write_matrix(out, F, o->fmt);
    gsl_matrix_free(F);
    free(fold);
    gpc_labels_free(l);
    return 0;
}

/* Which rows of FOLDS' column the selected side keeps; dies when F is not
 * a fold of it. */
static unsigned char *select_rows(const char *fpath, const options *o, size_t *n)
{
    gsl_matrix *F;
    gpc_source src;
    gpc_cli_check(gpc_matrix_read(fpath, &F, &src));
    if ((size_t)o->column > F->size2)
        gpc_cli_usage("--column=%ld, but %s has %zu column%s", o->column, gpc_cli_name(fpath),
                      F->size2, F->size2 == 1 ? "" : "s");
    long *fold = gpc_mallocarray(F->size1, sizeof *fold), lo = -1, hi = -1;
    gpc_cli_check(gpc_folds_column(F, &src, (size_t)o->column - 1, fold));
    unsigned char *keep = gpc_mallocarray(F->size1, sizeof *keep);
    size_t in = 0;
    for (size_t i = 0; i < F->size1; i++) {
        lo = lo < 0 || fold[i] < lo ? fold[i] : lo;
        hi = fold[i] > hi ? fold[i] : hi;
        in += fold[i] == o->select;
        keep[i] = (fold[i] == o->select) == (o->side == 't');
    }
    if (in == 0)
        gpc_cli_usage("--select=%ld: no case of %s is in fold %ld (its folds run from %ld to %ld)",
                      o->select, gpc_cli_name(fpath), o->select, lo, hi);
    if (o->side == 'T' && in == F->size1)
        gpc_die(GPC_EINPUT, "%s: every case is in fold %ld, so its training side is empty",
                gpc_cli_name(fpath), o->select);
    *n = F->size1;
    free(fold);
    gsl_matrix_free(F);
    gpc_source_free(&src);
    return keep;
}

static int cut_file(const char *fpath, const char *path, const options *o)
{
    gpc_cli_stdin_claim("the folds", fpath);
    gpc_cli_stdin_claim("the file to cut", path);
    gpc_output *out = gpc_cli_output(o->out);
    size_t n;
    unsigned char *keep = select_rows(fpath, o, &n);
    char *text;
    size_t len;
    const char *name;
    gpc_cli_check(gpc_input_read_all(path, &text, &len, &name));
    gpc_cli_check(gpc_folds_cut(text, len, name, keep, n, o->fmt_given, o->fmt,
                                gpc_output_file(out), gpc_output_name(out)));
    gpc_cli_check(gpc_output_commit(out));
    free(text);
    free(keep);
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    gpc_cli_init(argc, argv);
    parse(argc, argv, &o);
    check_options(argc, &o);
    if (o.select >= 0)
        return cut_file(argv[optind], optind + 1 < argc ? argv[optind + 1] : "-", &o);
    return make_folds(optind < argc ? argv[optind] : "-", &o);
}
