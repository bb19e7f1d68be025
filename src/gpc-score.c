/* gpc-score — test error, mean log predictive probability and Brier score
 * of binary or multiclass predictions against the true labels, and the
 * confusion matrix on request. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cli.h"
#include "err.h"
#include "matio.h"
#include "model.h"

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
           "B is the mean of sum_c (p_c - o_c)^2.  M is the mean over cases of\n"
           "log p(y_i | x_i) (natural log).\n"
           "\n"
           "  -m, --model=FILE  the labels are of this model's classes, which need not\n"
           "                    all be present (a test set without some class)\n"
           "      --column=N    the probabilities start at column N of PRED (default 1,\n"
           "                    or where the header line's p.A columns start)\n"
           "  -c, --confusion   also print the confusion matrix: a '#' line naming the\n"
           "                    classes, then one row per true class with the counts of\n"
           "                    each predicted class\n"
           "  -t, --table       print 'errors cases rate mlpp brier' as numbers instead\n"
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
    {"confusion", no_argument, NULL, 'c'},
    GPC_CLI_COMMON_OPTIONS};

/* The labels of the test set, with the classes that name the probability
 * columns: the model's when given (a class may then be absent), else those
 * of the predictions' header line when it names two or more (so a test set
 * without some class is read right), else those present in the labels (two:
 * binary).  A header also gives the first column unless --column did. */
static gpc_labels *read_test_labels(const char *ypath, const char *model_path,
                                    const char *header, int *binary, long *col, int col_given)
{
    gpc_labels *labels;
    char **names;
    long first = 1;
    size_t C = model_path ? 0 : gpc_labels_header_classes(header, &names, &first);
    if (C >= 2) {
        int st = gpc_labels_read_classes(ypath, names, C, &labels);
        for (size_t c = 0; c < C; c++)
            free(names[c]);
        free(names);
        gpc_cli_check(st);
        *binary = 0;
        if (!col_given)
            *col = first;
        return labels;
    }
    if (!model_path) {
        labels = gpc_cli_read_labels(ypath);
        *binary = labels->nclasses == 2;
        return labels;
    }
    gpc_model *m;
    gpc_cli_check(gpc_model_read(model_path, &m));
    char **model_names = gpc_mallocarray(m->nclasses, sizeof *model_names);
    for (size_t c = 0; c < m->nclasses; c++)
        model_names[c] = (char *)gpc_model_class(m, c);
    *binary = gpc_model_prob_columns(m) == 1;
    int st = gpc_labels_read_classes(ypath, model_names, m->nclasses, &labels);
    free(model_names);
    gpc_model_free(m);
    gpc_cli_check(st);
    return labels;
}

/* Case i's probability of each class (C of them) from its row of P. */
static void class_probabilities(const gsl_matrix *P, size_t i, size_t col, int binary, size_t C,
                                const char *name, double *p)
{
    double sum = 0.0;
    if (binary) {
        p[1] = gsl_matrix_get(P, i, col);
        p[0] = 1.0 - p[1];
    }
    for (size_t c = 0; c < C; c++) {
        if (!binary)
            p[c] = gsl_matrix_get(P, i, col + c);
        if (!(p[c] >= 0.0 && p[c] <= 1.0))
            gpc_die(GPC_EINPUT, "%s: row %zu: %g is not a probability", name, i + 1,
                    gsl_matrix_get(P, i, col + (binary ? 0 : c)));
        sum += p[c];
    }
    if (!binary && fabs(sum - 1.0) > 1e-6)
        gpc_die(GPC_EINPUT, "%s: row %zu: the %zu class probabilities from column %zu sum to "
                "%.10g, not 1; give gpc-predict's p columns (and --column where they start)",
                name, i + 1, C, col + 1, sum);
}

/* The predicted class: binary, the positive one when p >= 1/2 (so a tie
 * counts as +1); else the most probable, the first on ties. */
static size_t predicted(const double *p, size_t C, int binary)
{
    if (binary)
        return p[1] >= 0.5;
    size_t best = 0;
    for (size_t c = 1; c < C; c++)
        if (p[c] > p[best])
            best = c;
    return best;
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

int main(int argc, char **argv)
{
    long col = 1;
    const char *model_path = NULL;
    int table = 0, confusion = 0, col_given = 0, binary, c;
    gpc_format unused;
    gpc_cli_init(argc, argv);
    while ((c = getopt_long(argc, argv, "m:tcvqhV", long_options, NULL)) != -1) {
        if (gpc_cli_common(c, optarg, &unused))
            continue;
        switch (c) {
        case OPT_COLUMN:
            col = gpc_cli_long("--column", optarg, 1, 1000000);
            col_given = 1;
            break;
        case 'm': model_path = optarg; break;
        case 't': table = 1; break;
        case 'c': confusion = 1; break;
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
    gpc_cli_check(gpc_matrix_read(ppath, &P, &src));
    gpc_labels *labels = read_test_labels(ypath, model_path, src.header, &binary, &col,
                                          col_given);
    gpc_source_free(&src);
    size_t C = labels->nclasses, first = (size_t)col - 1, width = binary ? 1 : C;
    if (first + width > P->size2)
        gpc_die(GPC_EINPUT, "%s has %zu columns, too few for %s from column %ld", pname,
                P->size2, binary ? "p(y=+1|x)" : "the class probabilities", col);
    if (labels->n != P->size1)
        gpc_die(GPC_EINPUT, "%s has %zu labels but %s has %zu rows; they must match",
                gpc_cli_name(ypath), labels->n, pname, P->size1);
    size_t n = P->size1, errors = 0;
    size_t *counts = gpc_calloc(C * C, sizeof *counts);
    double *p = gpc_mallocarray(C, sizeof *p), sum_log = 0.0, sum_brier = 0.0;
    for (size_t i = 0; i < n; i++) {
        size_t yi = labels->cls[i];
        class_probabilities(P, i, first, binary, C, pname, p);
        size_t guess = predicted(p, C, binary);
        errors += guess != yi;
        counts[yi * C + guess]++;
        sum_log += log(p[yi]);
        double b = 0.0;
        for (size_t k = binary; k < C; k++) /* binary: (p - o)^2 of the positive class */
            b += (p[k] - (k == yi)) * (p[k] - (k == yi));
        sum_brier += b;
    }
    double rate = (double)errors / n, mlpp = sum_log / n, brier = sum_brier / n;
    if (table)
        printf("%zu %zu %.17g %.17g %.17g\n", errors, n, rate, mlpp, brier);
    else
        printf("errors %zu of %zu (%.1f%%), mean log predictive probability %.4f, "
               "Brier score %.4f\n", errors, n, 100.0 * rate, mlpp, brier);
    if (confusion)
        print_confusion(labels, counts);
    if (fflush(stdout) != 0 || ferror(stdout))
        gpc_die(GPC_EINPUT, "<stdout>: write error");
    gsl_matrix_free(P);
    gpc_labels_free(labels);
    free(counts);
    free(p);
    return 0;
}
