/* gpc-score — test error, mean log predictive probability and Brier score
 * of binary or multiclass predictions against the true labels; on request
 * the AUC, the expected calibration error, the confusion matrix and the
 * reliability table.  The numerics are in score.c. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "cli/cli.h"
#include "io/matio.h"
#include "report/score.h"

static void usage(void)
{
    printf("Usage: %s [OPTION]... PRED Y\n"
           "Compare predictions PRED (as written by gpc-predict) with the true labels Y\n"
           "(numbers or words, one per line) and print one line:\n"
           "  errors E of N (R%%), mean log predictive probability M, Brier score B\n"
           "Binary (two classes): column 1 of PRED is p(y=+1|x), the probability of the\n"
           "later class (the positive one of -1/+1 or 0/1); a case is an error when\n"
           "p >= 1/2 and y = -1 or p < 1/2 and y = +1, and B is the mean of (p - o)^2\n"
           "with o = 1 for y = +1, else 0.  Multiclass (three or more classes, or a\n"
           "multiclass model, or a header line naming class columns 'p.A p.B ...' as\n"
           "gpc-predict writes it): columns 1..C are the class probabilities in the\n"
           "classes' order (the model's, or the header's, which also says where they\n"
           "start); a case is an error when its most probable class is not its label, and\n"
           "B is the mean of sum_c (p_c - o_c)^2 (for two classes twice the binary B).\n"
           "M is the mean over cases of log p(y_i | x_i) (natural log).\n"
           "\n"
           "  -m, --model=FILE  the labels are of this model's classes, which need not\n"
           "                    all be present (a test set without some class)\n"
           "      --column=N    the probabilities start at column N of PRED (default 1,\n"
           "                    or where the header line's p.A columns start)\n"
           "  -a, --all         also the AUC (binary: the probability that a positive case\n"
           "                    has a higher p than a negative one, ties one half;\n"
           "                    'undefined' when a class is absent) and the expected\n"
           "                    calibration error ECE over B bins, on the same line:\n"
           "                    '..., AUC A, expected calibration error E (B bins)'\n"
           "      --bins=B      B equal-width bins over [0, 1] for the ECE and the\n"
           "                    reliability table (default 10, 1 to 1000000); binary:\n"
           "                    p against the frequency of y = +1; multiclass: the top\n"
           "                    class's probability against its accuracy;\n"
           "                    ECE = sum_b (n_b / N) |mean p_b - observed_b|\n"
           "  -c, --confusion   also print the confusion matrix: a '#' line naming the\n"
           "                    classes, then one row per true class with the counts of\n"
           "                    each predicted class\n"
           "  -r, --reliability also print the reliability table: a line\n"
           "                    '# lo hi mean_pred observed count', then one row per bin\n"
           "                    (its edges, mean probability, observed frequency and\n"
           "                    number of cases; nan for the means of an empty bin;\n"
           "                    edges with four significant digits, means with four\n"
           "                    decimals)\n"
           "  -t, --table       print 'errors cases rate mlpp brier' as numbers instead\n"
           "                    (with -a also 'auc ece', auc nan where undefined), each\n"
           "                    with four decimals, as the line above has them\n"
           "      --precise     print the numbers of -t and -r with 17 significant\n"
           "                    digits, which read back as the same doubles\n"
           GPC_CLI_HEADER_HELP
           "  -q, --quiet       no messages except errors\n"
           "  -v, --verbose     more messages\n"
           "  -h, --help        show this help and exit\n"
           "  -V, --version     show the version and exit\n"
           "\n"
           "Exit status: 0 success, 2 usage error, 3 input or output error.\n",
           gpc_progname());
    gpc_cli_exit_written(); /* exit 0, or 3 if the help could not be written */
}

enum { OPT_COLUMN = 256, OPT_BINS, OPT_PRECISE };

static const struct option long_options[] = {
    {"model", required_argument, NULL, 'm'},
    {"column", required_argument, NULL, OPT_COLUMN},
    {"all", no_argument, NULL, 'a'},
    {"bins", required_argument, NULL, OPT_BINS},
    {"table", no_argument, NULL, 't'},
    {"precise", no_argument, NULL, OPT_PRECISE},
    {"confusion", no_argument, NULL, 'c'},
    {"reliability", no_argument, NULL, 'r'},
    GPC_CLI_COMMON_OPTIONS};

/* Case i's probability of each class (C of them) from its row of P. */
static void class_probabilities(const gsl_matrix *P, size_t i, size_t col, int binary, size_t C,
                                const char *name, double *p)
{
    if (binary) {
        p[1] = gsl_matrix_get(P, i, col);
        p[0] = 1.0 - p[1];
    }
    for (size_t c = 0; c < C; c++) {
        if (!binary)
            p[c] = gsl_matrix_get(P, i, col + c);
        if (!(p[c] >= 0.0 && p[c] <= 1.0))
            gpc_die(GPC_EINPUT, "%s: row %zu: %.17g is not a probability", name, i + 1,
                    gsl_matrix_get(P, i, col + (binary ? 0 : c)));
    }
    if (!binary && gpc_score_check_sum(p, C, col + 1) != GPC_OK)
        gpc_die(GPC_EINPUT, "%s: row %zu: %s; give gpc-predict's p columns (and --column "
                "where they start)", name, i + 1, gpc_errmsg());
}

/* The predicted class: binary, the positive one when p >= 1/2 (so a tie
 * counts as +1); else the most probable, the first on ties. */
static size_t predicted(const double *p, size_t C, int binary)
{
    return binary ? p[1] >= 0.5 : gpc_score_argmax(p, C);
}

static void print_confusion(const gpc_labels *l, const size_t *counts)
{
    size_t C = l->nclasses;
    printf("# true\\predicted");
    for (size_t c = 0; c < C; c++)
        printf(" %s", l->names[c]);
    putchar('\n');
    for (size_t a = 0; a < C; a++) {
        printf("%s", l->names[a]);
        for (size_t b = 0; b < C; b++)
            printf(" %zu", counts[a * C + b]);
        putchar('\n');
    }
}

/* The probabilities the calibration is of, with their outcomes: binary,
 * p(y=+1) and whether y = +1; multiclass, the top class's probability and
 * whether the top class is right (top-label calibration). */
static void calibration_cases(const double *probs, const gpc_labels *l, int binary,
                              double *pred, int *hit)
{
    size_t n = l->n, C = l->nclasses;
    if (!binary) {
        gpc_score_top_label(probs, n, C, l->cls, pred, hit);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        pred[i] = probs[i * C + 1];
        hit[i] = l->cls[i] == 1;
    }
}

/* How -t and -r print a number: for people, FMT (gpc(7), NUMBERS); with
 * --precise, every digit a double needs to read back the same. */
static int precise;

static void print_number(const char *fmt, double x)
{
    if (isnan(x))
        printf("nan");
    else
        printf(precise ? "%.17g" : fmt, x);
}

/* One row per bin: "lo hi mean_pred observed count", nan for the means of
 * an empty bin (numpy, R and gnuplot read it as missing). */
static void print_reliability(const gpc_score_bin *bins, size_t nbins)
{
    printf("# lo hi mean_pred observed count\n");
    for (size_t b = 0; b < nbins; b++) {
        print_number("%.4g", bins[b].lo);
        putchar(' ');
        print_number("%.4g", bins[b].hi);
        putchar(' ');
        print_number("%.4f", bins[b].mean_pred);
        putchar(' ');
        print_number("%.4f", bins[b].observed);
        printf(" %zu\n", bins[b].count);
    }
}

/* The class of a binary test set that has no case (the AUC needs both). */
static size_t absent_class(const gpc_labels *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->cls[i] == 1)
            return 0;
    return 1;
}

/* The scores asked for, on one line; auc NaN when undefined or multiclass. */
typedef struct {
    size_t errors, n, nbins;
    double rate, mlpp, brier, auc, ece;
} scores;

static void print_scores(const scores *s, const gpc_labels *l, int binary, int all, int table)
{
    if (table) {
        printf("%zu %zu ", s->errors, s->n);
        print_number("%.4f", s->rate);
        putchar(' ');
        print_number("%.4f", s->mlpp);
        putchar(' ');
        print_number("%.4f", s->brier);
        if (all) {
            putchar(' ');
            print_number("%.4f", s->auc);
            putchar(' ');
            print_number("%.4f", s->ece);
        }
        putchar('\n');
        return;
    }
    printf("errors %zu of %zu (%.1f%%), mean log predictive probability %.4f, "
           "Brier score %.4f", s->errors, s->n, 100.0 * s->rate, s->mlpp, s->brier);
    if (all && binary && isnan(s->auc))
        printf(", AUC undefined (no case of class %s)", l->names[absent_class(l)]);
    else if (all && binary)
        printf(", AUC %.4f", s->auc);
    if (all)
        printf(", expected calibration error %.4f (%zu bin%s)", s->ece, s->nbins,
               s->nbins == 1 ? "" : "s");
    putchar('\n');
}

/* Every case's probability of each class, n x C row-major (binary: 1 - p,
 * p), checked; the errors counted and the confusion counts (C x C, true
 * class by row) filled on the way. */
static double *checked_probabilities(const gsl_matrix *P, size_t first, int binary,
                                     const gpc_labels *l, const char *pname, size_t *counts,
                                     size_t *errors)
{
    size_t n = l->n, C = l->nclasses;
    double *probs = gpc_mallocarray(n, C * sizeof *probs);
    for (size_t i = 0; i < n; i++) {
        double *p = probs + i * C;
        class_probabilities(P, i, first, binary, C, pname, p);
        size_t guess = predicted(p, C, binary), yi = l->cls[i];
        *errors += guess != yi;
        counts[yi * C + guess]++;
    }
    return probs;
}

/* The rate, the mean log probability and the Brier score into s; with
 * calibration also the bins and the ECE, with all (binary) the AUC. */
static void compute_scores(const double *probs, const gpc_labels *l, int binary, int all,
                           int calibration, scores *s, gpc_score_bin *bins)
{
    size_t n = l->n, C = l->nclasses;
    double *pred = gpc_mallocarray(n, sizeof *pred);
    int *hit = gpc_mallocarray(n, sizeof *hit);
    calibration_cases(probs, l, binary, pred, hit);
    s->rate = (double)s->errors / n;
    s->mlpp = gpc_score_mean_log(probs, n, C, l->cls);
    s->brier = binary ? gpc_score_brier_binary(pred, hit, n) : gpc_score_brier(probs, n, C, l->cls);
    if (calibration) {
        gpc_cli_check(gpc_score_reliability(pred, hit, n, s->nbins, bins));
        s->ece = gpc_score_ece(bins, s->nbins);
    }
    if (all && binary) /* a sort of the cases: only when asked for */
        s->auc = gpc_score_auc(pred, hit, n);
    free(pred);
    free(hit);
}

int main(int argc, char **argv)
{
    long col = 1, nbins = 10;
    const char *model_path = NULL;
    int table = 0, confusion = 0, all = 0, reliability = 0, col_given = 0, binary, c;
    gpc_format unused;
    gpc_cli_init(argc, argv);
    while ((c = getopt_long(argc, argv, "m:actrvqhV", long_options, NULL)) != -1) {
        if (gpc_cli_common(c, optarg, &unused))
            continue;
        switch (c) {
        case OPT_COLUMN:
            col = gpc_cli_long("--column", optarg, 1, 1000000);
            col_given = 1;
            break;
        case OPT_BINS: nbins = gpc_cli_long("--bins", optarg, 1, 1000000); break;
        case OPT_PRECISE: precise = 1; break;
        case 'm': model_path = optarg; break;
        case 'a': all = 1; break;
        case 't': table = 1; break;
        case 'c': confusion = 1; break;
        case 'r': reliability = 1; break;
        case 'h': usage();
        }
    }
    if (argc - optind != 2)
        gpc_cli_usage("expected two files, the predictions and the labels");
    const char *ppath = argv[optind], *ypath = argv[optind + 1], *pname = gpc_cli_name(ppath);
    gpc_cli_stdin_claim("the predictions", ppath);
    gpc_cli_stdin_claim("the labels", ypath);
    gpc_cli_stdin_claim("the model (-m)", model_path);
    gsl_matrix *P;
    gpc_source src;
    P = gpc_cli_read_predictions(ppath, &src);
    gpc_labels *labels = gpc_cli_read_test_labels(ypath, model_path, src.header, &binary, &col,
                                          col_given);
    gpc_source_free(&src);
    size_t C = labels->nclasses, first = (size_t)col - 1, width = binary ? 1 : C;
    if (first + width > P->size2)
        gpc_die(GPC_EINPUT, "%s has %zu columns, too few for %s from column %ld", pname,
                P->size2, binary ? "p(y=+1|x)" : "the class probabilities", col);
    if (labels->n != P->size1)
        gpc_die(GPC_EINPUT, "%s has %zu labels but %s has %zu rows; they must match",
                gpc_cli_name(ypath), labels->n, pname, P->size1);
    size_t n = P->size1;
    size_t *counts = gpc_calloc(C * C, sizeof *counts);
    scores s = {.n = n, .nbins = (size_t)nbins, .auc = NAN, .ece = NAN};
    double *probs = checked_probabilities(P, first, binary, labels, pname, counts, &s.errors);
    gsl_matrix_free(P);
    gpc_score_bin *bins = gpc_mallocarray(all || reliability ? s.nbins : 1, sizeof *bins);
    compute_scores(probs, labels, binary, all, all || reliability, &s, bins);
    if (all && table && binary && isnan(s.auc))
        gpc_info(1, "the labels hold no case of class %s, so the AUC is undefined (nan)",
                 labels->names[absent_class(labels)]);
    print_scores(&s, labels, binary, all, table);
    if (confusion)
        print_confusion(labels, counts);
    if (reliability)
        print_reliability(bins, s.nbins);
    if (fflush(stdout) != 0 || ferror(stdout))
        gpc_die(GPC_EINPUT, "<stdout>: write error");
    gpc_labels_free(labels);
    free(probs);
    free(counts);
    free(bins);
    return 0;
}
