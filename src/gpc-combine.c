/* gpc-combine — combine the class probabilities of several classifiers of
 * the same cases (prediction files of gpc-predict, e.g. one per feature
 * set) by the sum or the product rule. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "cli/cli.h"
#include "io/labels.h"
#include "io/matio.h"
#include "report/combine.h"
#include "report/score.h"

static void usage(void)
{
    printf("Usage: %s [OPTION]... PRED PRED...\n"
           "Combine the class probabilities that several classifiers give the same cases,\n"
           "one prediction file each (as gpc-predict writes them: a multiclass file's\n"
           "header line '# p.A p.B ...' names the classes, which must be the same in\n"
           "every file; a file without one holds p(y=+1) of a binary problem in its first\n"
           "column).  Writes the combined probabilities and the most probable class.\n"
           "\n"
           "  -r, --rule=RULE      sum (default: the mean of the probabilities) or\n"
           "                       product (their normalised product, the classifiers'\n"
           "                       likelihoods multiplied under equal class priors)\n"
           "  -c, --columns=LIST   p and/or label, comma-separated (default p,label)\n"
           "  -o, --output=FILE    write here (default: standard output)\n"
           "  -F, --format=FMT     text (default) or npy\n"
           "  -v, --verbose        more messages\n"
           GPC_CLI_HEADER_HELP
           "  -q, --quiet          no messages\n"
           "  -h, --help           show this help and exit\n"
           "  -V, --version        show the version and exit\n"
           "\n"
           "A multiclass label is the most probable class itself (its number 1..C with\n"
           "-F npy, as a '# label:' line says for word classes); a binary label is +1\n"
           "when p >= 1/2, else -1 (gpc-predict's and gpc-score's rule).  Exit status: 0 success, 1 a case the product rule cannot combine,\n"
           "2 usage error, 3 input or output error.\n",
           gpc_progname());
    gpc_cli_exit_written(); /* exit 0, or 3 if the help could not be written */
}

static const struct option long_options[] = {
    {"rule", required_argument, NULL, 'r'},
    {"columns", required_argument, NULL, 'c'},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'F'},
    GPC_CLI_COMMON_OPTIONS};

/* One prediction file: its probability columns (m x C; C = 1 for p(y=+1))
 * and, for a multiclass file, its classes. */
typedef struct {
    gsl_matrix *p;
    char **names;
    size_t C;
} predictions;

static predictions read_predictions(const char *path)
{
    const char *name = gpc_cli_name(path);
    gsl_matrix *M;
    gpc_source src;
    M = gpc_cli_read_predictions(path, &src);
    predictions r = {NULL, NULL, 1};
    long first = 1;
    size_t C = gpc_labels_header_classes(src.header, &r.names, &first);
    gpc_source_free(&src);
    r.C = C >= 2 ? C : 1;
    if ((size_t)first - 1 + r.C > M->size2)
        gpc_die(GPC_EINPUT, "%s has %zu columns, too few for the probabilities its header "
                "names", name, M->size2);
    r.p = gpc_matrix_alloc(M->size1, r.C);
    for (size_t i = 0; i < M->size1; i++)
        for (size_t c = 0; c < r.C; c++) {
            double v = gsl_matrix_get(M, i, (size_t)first - 1 + c);
            if (!(v >= 0.0 && v <= 1.0))
                gpc_die(GPC_EINPUT, "%s: row %zu: %.17g is not a probability; give gpc-predict's "
                        "p columns", name, i + 1, v);
            gsl_matrix_set(r.p, i, c, v);
        }
    /* a multiclass row must be a distribution, as gpc-score requires: the
     * sum rule would pass on the shortfall, and the product rule's
     * normalising would hide it */
    for (size_t i = 0; i < M->size1 && r.C > 1; i++)
        if (gpc_score_check_sum(gsl_matrix_const_ptr(r.p, i, 0), r.C, (size_t)first) != GPC_OK)
            gpc_die(GPC_EINPUT, "%s: row %zu: %s; give gpc-predict's p columns", name, i + 1,
                    gpc_errmsg());
    gsl_matrix_free(M);
    return r;
}

/* Every file like the first: the same classes in the same order, the same
 * number of cases. */
static void check_alike(const predictions *a, const predictions *b, const char *first,
                        const char *other)
{
    if (a->C != b->C)
        gpc_die(GPC_EINPUT, "%s has %zu probability columns, %s has %zu; combine predictions "
                "of the same classes", other, b->C, first, a->C);
    for (size_t c = 0; c < a->C && a->names; c++)
        if (strcmp(a->names[c], b->names[c]) != 0)
            gpc_die(GPC_EINPUT, "%s names class %zu '%s', %s '%s'; combine predictions of "
                    "the same classes in the same order", other, c + 1, b->names[c], first,
                    a->names[c]);
    if (a->p->size1 != b->p->size1)
        gpc_die(GPC_EINPUT, "%s has %zu cases, %s has %zu; combine predictions of the same "
                "cases", other, b->p->size1, first, a->p->size1);
}

/* The label of the most probable class of row i (see usage). */
static double label_of(const predictions *a, const gsl_matrix *p, size_t i, int numeric,
                       const double *codes)
{
    if (a->C == 1)
        return gsl_matrix_get(p, i, 0) >= 0.5 ? 1.0 : -1.0;
    size_t best = 0;
    for (size_t c = 1; c < a->C; c++)
        if (gsl_matrix_get(p, i, c) > gsl_matrix_get(p, i, best))
            best = c;
    return numeric ? codes[best] : (double)(best + 1);
}

int main(int argc, char **argv)
{
    const char *rule_name = "sum", *columns = "p,label", *out = "-";
    gpc_format fmt = GPC_FMT_TEXT;
    int c;
    gpc_cli_init(argc, argv);
    while ((c = getopt_long(argc, argv, "r:c:o:F:vqhV", long_options, NULL)) != -1) {
        if (gpc_cli_common(c, optarg, &fmt))
            continue;
        switch (c) {
        case 'r': rule_name = optarg; break;
        case 'c': columns = optarg; break;
        case 'o': out = optarg; break;
        case 'h': usage();
        }
    }
    gpc_combine_rule rule;
    if (gpc_combine_parse(rule_name, &rule) != GPC_OK)
        gpc_cli_usage("--rule: %s", gpc_errmsg());
    int want_p = 0, want_label = 0;
    char *copy = gpc_strdup(columns), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "p"))
            want_p = 1;
        else if (!strcmp(t, "label"))
            want_label = 1;
        else
            gpc_cli_usage("--columns: '%s' is not p or label", t);
    }
    free(copy);
    if (!want_p && !want_label)
        gpc_cli_usage("--columns: give p, label or both");
    size_t J = (size_t)(argc - optind);
    if (J < 2)
        gpc_cli_usage("expected two or more prediction files");
    for (size_t j = 0; j < J; j++) {
        char what[48]; /* each file by its place: one name would be one input */
        snprintf(what, sizeof what, "prediction file %zu", j + 1);
        gpc_cli_stdin_claim(what, argv[optind + (int)j]);
    }
    gpc_output *output = gpc_cli_output(out);
    predictions *pr = gpc_calloc(J, sizeof *pr);
    gsl_matrix **ps = gpc_calloc(J, sizeof *ps);
    for (size_t j = 0; j < J; j++) {
        pr[j] = read_predictions(argv[optind + (int)j]);
        if (j > 0)
            check_alike(&pr[0], &pr[j], gpc_cli_name(argv[optind]),
                        gpc_cli_name(argv[optind + (int)j]));
        ps[j] = pr[j].p;
    }
    size_t m = pr[0].p->size1, C = pr[0].C;
    gsl_matrix *comb = gpc_matrix_alloc(m, C);
    gpc_cli_check(gpc_combine(rule, ps, J, comb));

    /* numeric classes are their own labels, words get numbers 1..C */
    double *codes = gpc_mallocarray(C, sizeof *codes);
    int numeric = 1;
    for (size_t k = 0; k < C && pr[0].names; k++)
        numeric &= gpc_labels_number(pr[0].names[k], &codes[k]);
    size_t width = (want_p ? C : 0) + (size_t)want_label;
    gsl_matrix *res = gpc_matrix_alloc(m, width);
    for (size_t i = 0; i < m; i++) {
        size_t o = 0;
        for (size_t k = 0; want_p && k < C; k++)
            gsl_matrix_set(res, i, o++, gsl_matrix_get(comb, i, k));
        if (want_label)
            gsl_matrix_set(res, i, o, label_of(&pr[0], comb, i, numeric, codes));
    }
    if (fmt == GPC_FMT_TEXT && pr[0].names) {
        FILE *f = gpc_output_file(output);
        fputc('#', f);
        for (size_t k = 0; want_p && k < C; k++)
            fprintf(f, " p.%s", pr[0].names[k]);
        fputs(want_label ? " label\n" : "\n", f);
        if (want_label && !numeric) {
            fputs("# label:", f);
            for (size_t k = 0; k < C; k++)
                fprintf(f, "%s %zu %s", k ? "," : "", k + 1, pr[0].names[k]);
            fputc('\n', f);
        }
    }
    /* word classes are written as themselves, as gpc-predict writes them */
    char **text = NULL;
    if (want_label && pr[0].names && !numeric) {
        text = gpc_mallocarray(m, sizeof *text);
        for (size_t i = 0; i < m; i++)
            text[i] = pr[0].names[(size_t)gsl_matrix_get(res, i, width - 1) - 1];
    }
    gpc_cli_write_tokens(output, res, fmt, width - 1, text);
    free(text);
    for (size_t j = 0; j < J; j++) {
        gsl_matrix_free(pr[j].p);
        for (size_t k = 0; pr[j].names && k < pr[j].C; k++)
            free(pr[j].names[k]);
        free(pr[j].names);
    }
    free(pr);
    free(ps);
    free(codes);
    gsl_matrix_free(comb);
    gsl_matrix_free(res);
    return 0;
}
