/* test_libsvm — LIBSVM's sparse format: detection, hand-written files read
 * into dense matrices entry by entry, labels, the matrix and labels readers'
 * dispatch, and every error with its whole message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "io/labels.h"
#include "io/libsvm.h"
#include "io/matio.h"
#include "tap.h"

/* Parse text as the file "s.svm"; labels too when want_labels. */
static int parse(const char *text, gpc_source *src, gsl_matrix **x, char ***labels)
{
    *src = (gpc_source){.line = NULL};
    snprintf(src->name, sizeof src->name, "s.svm");
    return gpc_libsvm_read(text, strlen(text), src, x, labels);
}

static void test_detection(void)
{
    static const struct {
        const char *text;
        int is;
        const char *why;
    } cases[] = {
        {"+1 1:0.5 3:2\n", 1, "a label and pairs"},
        {"# a comment\n\n1\n-1\n0 4:1\n", 1, "label-only lines decide nothing; the first pair does"},
        {"1 2:3 # c\n", 1, "a comment after the pairs"},
        {"1:0.5 2:3\n", 1, "pairs without a label (an error for the reader to name)"},
        {"1 qid:3 1:2\n", 1, "qid (an error for the reader to name)"},
        {"1 2 3\n4 5 6\n", 0, "a dense matrix"},
        {"1\n-1\n1\n", 0, "a labels file: one token a line"},
        {"class:a\nclass:b\n", 0, "labels that are words with a colon"},
        {"1 2\n3 4:5\n", 0, "the first line of two tokens is dense"},
        {"t 12:30,5\n", 0, "a CSV field with a time in it"},
        {"# 1 2:3\n", 0, "pairs in a comment only"},
        {"", 0, "empty"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        TEST_OK(gpc_libsvm_is(cases[k].text, strlen(cases[k].text)) == cases[k].is,
                "detection: %s is%s LIBSVM", cases[k].why, cases[k].is ? "" : " not");
}

/* Every entry of x against want (rows x cols, row-major), exactly. */
static int same_entries(const gsl_matrix *x, const double *want, size_t rows, size_t cols)
{
    if (x->size1 != rows || x->size2 != cols)
        return 0;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            if (gsl_matrix_get(x, i, j) != want[i * cols + j]) {
                printf("#   (%zu, %zu): got %.17g, want %.17g\n", i + 1, j + 1,
                       gsl_matrix_get(x, i, j), want[i * cols + j]);
                return 0;
            }
    return 1;
}

static void test_hand_written(void)
{
    /* line 2 blank, line 4 a comment, line 6 a label alone (all zeros), CRLF
     * on line 5, a tab and a trailing comment on line 1, no final newline */
    const char *text = "+1\t1:0.5 3:-2 # first\n"
                       "\n"
                       "-1 4:1e-3\n"
                       "# a comment line\n"
                       "yes 2:1e3 4:+7\r\n"
                       "0\n"
                       "2 1:-0 2:0x10";
    const double want[] = {0.5, 0, -2, 0,      /* line 1 */
                           0, 0, 0, 1e-3,      /* line 3 */
                           0, 1000, 0, 7,      /* line 5 */
                           0, 0, 0, 0,         /* line 6 */
                           -0.0, 16, 0, 0};    /* line 7 (hex as strtod reads it) */
    const size_t lines[] = {1, 3, 5, 6, 7};
    const char *labels_want[] = {"+1", "-1", "yes", "0", "2"};
    gpc_source src;
    gsl_matrix *x;
    char **labels;
    int st = parse(text, &src, &x, &labels);
    if (!TEST_OK(st == GPC_OK, "hand-written file read (%s)", st ? gpc_errmsg() : "ok"))
        return;
    TEST_OK(x->size1 == 5 && x->size2 == 4, "5 rows, 4 columns (the largest index): %zux%zu",
            x->size1, x->size2);
    TEST_OK(same_entries(x, want, 5, 4), "every entry as written, 0 where none is");
    int ok = src.rows == 5 && src.sparse == 1;
    for (size_t i = 0; ok && i < 5; i++)
        ok = src.line[i] == lines[i] && strcmp(labels[i], labels_want[i]) == 0;
    TEST_OK(ok, "rows know their lines (1 3 5 6 7) and labels (+1 -1 yes 0 2), sparse set");
    gsl_matrix_free(x);
    gpc_libsvm_labels_free(labels, src.rows);
    gpc_source_free(&src);

    /* labels only: no matrix is built */
    st = parse("a 1:1\nb 3:1\n", &src, NULL, &labels);
    TEST_OK(st == GPC_OK && src.rows == 2 && !strcmp(labels[0], "a") && !strcmp(labels[1], "b"),
            "labels without the matrix");
    if (st == GPC_OK)
        gpc_libsvm_labels_free(labels, src.rows);
    gpc_source_free(&src);
}

/* A dense matrix with zeros, written as LIBSVM by its own loop (zeros left
 * out, %.17g), read back: every entry must come back exactly. */
static void test_round_trip(void)
{
    enum { R = 30, C = 9 };
    double want[R * C];
    size_t size = 64 * R * C, len = 0;
    char *text = malloc(size + 1);
    unsigned s = 12345;
    for (size_t i = 0; i < R; i++) {
        len += (size_t)snprintf(text + len, size - len, "%zu", i % 3);
        for (size_t j = 0; j < C; j++) {
            s = s * 1103515245u + 12345u;
            double v = (s >> 16) % 3 == 0 ? 0.0 : ((double)(s >> 8) / 65536.0 - 128.0) / 7.0;
            if (i == 4 || (j == C - 1 && i != 7))
                v = 0.0; /* a row of zeros; the last column only in row 8 */
            want[i * C + j] = v;
            if (v != 0.0)
                len += (size_t)snprintf(text + len, size - len, " %zu:%.17g", j + 1, v);
        }
        len += (size_t)snprintf(text + len, size - len, "\n");
    }
    gpc_source src;
    gsl_matrix *x;
    int st = parse(text, &src, &x, NULL);
    if (TEST_OK(st == GPC_OK, "a 30x9 matrix with zeros left out read (%s)",
                st ? gpc_errmsg() : "ok")) {
        TEST_OK(same_entries(x, want, R, C), "all 270 entries exactly as the dense matrix");
        gsl_matrix_free(x);
    }
    gpc_source_free(&src);
    free(text);
}

/* The matrix reader and the labels reader dispatch to the format. */
static void test_dispatch(void)
{
    char path[] = "/tmp/gpc_test_libsvm_XXXXXX";
    int fd = mkstemp(path);
    const char *text = "# cases\n-1 2:3\n1 1:4\n";
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
        perror(path);
        exit(99);
    }
    close(fd);
    gsl_matrix *x;
    gpc_source src;
    int st = gpc_matrix_read(path, &x, &src);
    if (TEST_OK(st == GPC_OK, "gpc_matrix_read takes a LIBSVM file (%s)",
                st ? gpc_errmsg() : "ok")) {
        TEST_OK(same_entries(x, (double[]){0, 3, 4, 0}, 2, 2) && src.sparse == 1 &&
                    src.line[0] == 2 && src.line[1] == 3,
                "its features (labels dropped), its lines, and sparse set");
        gsl_matrix_free(x);
        gpc_source_free(&src);
    }
    FILE *f = fmemopen((char *)"1 2\n3 4\n", 8, "rb");
    st = gpc_matrix_read_stream(f, "d.txt", &x, &src);
    fclose(f);
    TEST_OK(st == GPC_OK && src.sparse == 0 && x->size2 == 2, "a dense text is not sparse");
    if (st == GPC_OK) {
        gsl_matrix_free(x);
        gpc_source_free(&src);
    }

    gpc_labels *l;
    st = gpc_labels_read(path, &l);
    if (TEST_OK(st == GPC_OK, "gpc_labels_read takes a LIBSVM file (%s)",
                st ? gpc_errmsg() : "ok")) {
        TEST_OK(l->n == 2 && l->nclasses == 2 && !strcmp(l->names[0], "-1") &&
                    !strcmp(l->names[1], "1") && l->cls[0] == 0 && l->cls[1] == 1,
                "its labels are the first tokens: -1 1");
        gpc_labels_free(l);
    }
    char *model_classes[] = {"-1", "2"};
    st = gpc_labels_read_classes(path, model_classes, 2, &l);
    char want[600];
    snprintf(want, sizeof want, "%s:3: label '1' is not one of the model's classes (-1 2)",
             path);
    TEST_OK(st == GPC_EINPUT && !strcmp(gpc_errmsg(), want),
            "a label the model lacks is named with its line (%s)", gpc_errmsg());

    char *tok[] = {"b", "a", "b"};
    l = gpc_labels_of_tokens(tok, 3);
    TEST_OK(l->nclasses == 2 && !strcmp(l->names[0], "a") && l->cls[0] == 1 && l->cls[1] == 0 &&
                l->cls[2] == 1,
            "labels in memory make the classes a file would");
    gpc_labels_free(l);
    unlink(path);
}

/* Read text under a numbering mode: its matrix, or NULL on an error. */
static gsl_matrix *read_as(gpc_libsvm_base mode, const char *text, gpc_source *src)
{
    gsl_matrix *x = NULL;
    gpc_libsvm_set_base(mode);
    int st = parse(text, src, &x, NULL);
    gpc_libsvm_set_base(GPC_LIBSVM_AUTO);
    if (st != GPC_OK)
        printf("#   %s\n", gpc_errmsg());
    return x;
}

/* Files numbered from 0 (scikit-learn's default): index 0 anywhere makes the
 * whole file so, index j its column j + 1; a file numbered from 1 without
 * index 0 reads as it always did; the modes force either. */
static void test_zero_based(void)
{
    /* the same 3x3 matrix numbered from 1 and from 0; index 0 first appears
     * on line 3, after a line that would read alike either way */
    const char *one = "a 2:5 3:6\nb 3:7\nc 1:1 2:2\n";
    const char *zero = "a 1:5 2:6\nb 2:7\nc 0:1 1:2\n";
    const double want[] = {0, 5, 6, 0, 0, 7, 1, 2, 0};
    gpc_source src;
    gsl_matrix *x = read_as(GPC_LIBSVM_AUTO, one, &src);
    TEST_OK(x && same_entries(x, want, 3, 3) && !src.zero_based,
            "auto: a file without index 0 is numbered from 1");
    gsl_matrix_free(x);
    gpc_source_free(&src);
    x = read_as(GPC_LIBSVM_AUTO, zero, &src);
    TEST_OK(x && same_entries(x, want, 3, 3) && src.zero_based && src.sparse,
            "auto: index 0 on the last line makes every line numbered from 0");
    gsl_matrix_free(x);
    gpc_source_free(&src);
    x = read_as(GPC_LIBSVM_ZERO, zero, &src);
    TEST_OK(x && same_entries(x, want, 3, 3) && src.zero_based, "zero: the same matrix");
    gsl_matrix_free(x);
    gpc_source_free(&src);

    /* numbered from 0 with the first feature never written: only the mode
     * can say so, and the matrix is as wide as the largest index + 1 */
    x = read_as(GPC_LIBSVM_ZERO, "a 1:5 2:6\nb 2:7\n", &src);
    TEST_OK(x && same_entries(x, (double[]){0, 5, 6, 0, 0, 7}, 2, 3) && src.zero_based,
            "zero: without index 0, index 1 is the second column");
    gsl_matrix_free(x);
    gpc_source_free(&src);
    x = read_as(GPC_LIBSVM_AUTO, "a 1:5 2:6\nb 2:7\n", &src);
    TEST_OK(x && same_entries(x, (double[]){5, 6, 0, 7}, 2, 2) && !src.zero_based,
            "auto: the same text numbered from 1");
    gsl_matrix_free(x);
    gpc_source_free(&src);
    x = read_as(GPC_LIBSVM_ONE, one, &src);
    TEST_OK(x && same_entries(x, want, 3, 3) && !src.zero_based, "one: a file from 1");
    gsl_matrix_free(x);
    gpc_source_free(&src);

    /* a single column, index 0 only; a label alone is all zeros */
    x = read_as(GPC_LIBSVM_AUTO, "1 0:3\n-1\n", &src);
    TEST_OK(x && same_entries(x, (double[]){3, 0}, 2, 1), "index 0 alone is one column");
    gsl_matrix_free(x);
    gpc_source_free(&src);

    /* the largest index numbered from 0 is one column more: 2^20 - 1 is the
     * last that fits */
    x = read_as(GPC_LIBSVM_AUTO, "1 0:1 1048575:2\n", &src);
    TEST_OK(x && x->size2 == 1048576 && gsl_matrix_get(x, 0, 1048575) == 2.0,
            "zero-based index 2^20 - 1 is column 2^20");
    gsl_matrix_free(x);
    gpc_source_free(&src);
}

static void expect_error(const char *what, const char *text, const char *message)
{
    gpc_source src;
    gsl_matrix *x = NULL;
    char **labels = NULL;
    int st = parse(text, &src, &x, &labels);
    int ok = st == GPC_EINPUT && x == NULL && labels == NULL && src.line == NULL &&
             strcmp(gpc_errmsg(), message) == 0;
    if (!TEST_OK(ok, "%s: error message", what))
        printf("#   got  %d '%s'\n#   want '%s'\n", st, st ? gpc_errmsg() : "", message);
}

static void test_errors(void)
{
    gpc_libsvm_set_base(GPC_LIBSVM_ONE);
    expect_error("index 0 numbered from 1", "1 1:2\n-1 0:1 2:3\n",
                 "s.svm:2: '0:1': index 0 in a file read as numbered from 1 (--one-based); "
                 "leave the option out, or give --zero-based, to read index 0 as the first "
                 "column");
    gpc_libsvm_set_base(GPC_LIBSVM_AUTO);
    expect_error("index 2^20 numbered from 0", "1 0:1\n-1 5:1 1048576:3\n",
                 "s.svm:2: index 1048576 numbered from 0 is column 1048577, beyond the 1048576 "
                 "columns gpc can hold; renumber the features that occur as 0, 1, 2, ...");
    expect_error("index 0 twice", "1 0:1 0:2\n",
                 "s.svm:1: index 0 after index 0; indices must be strictly ascending (sort "
                 "each line's pairs by index, each index once)");
    expect_error("index 0 after another", "1 3:1 0:2\n",
                 "s.svm:1: index 0 after index 3; indices must be strictly ascending (sort "
                 "each line's pairs by index, each index once)");
    expect_error("a negative index", "1 -3:1\n",
                 "s.svm:1: '-3:1': index -3 is negative; indices start at 0 or 1");
    expect_error("a fractional index", "1 1.5:2\n",
                 "s.svm:1: '1.5:2' has no whole-number index before ':'; features are "
                 "index:value with index 1, 2, 3, ...");
    expect_error("a word as index", "1 a:2\n",
                 "s.svm:1: 'a:2' has no whole-number index before ':'; features are "
                 "index:value with index 1, 2, 3, ...");
    expect_error("no index", "1 2:1 :3\n",
                 "s.svm:1: ':3' has no index before ':'; features are index:value with index "
                 "1, 2, 3, ...");
    expect_error("indices descending", "1 1:1\n1 3:1 2:1\n",
                 "s.svm:2: index 2 after index 3; indices must be strictly ascending (sort "
                 "each line's pairs by index, each index once)");
    expect_error("an index twice", "1 2:1 2:5\n",
                 "s.svm:1: index 2 after index 2; indices must be strictly ascending (sort "
                 "each line's pairs by index, each index once)");
    expect_error("a value that is not a number", "1 1:1\n\n1 2:abc\n",
                 "s.svm:3: '2:abc': 'abc' is not a number");
    expect_error("a value with junk after it", "1 2:1.5x\n",
                 "s.svm:1: '2:1.5x': '1.5x' is not a number");
    expect_error("no value", "1 2:\n", "s.svm:1: '2:' has no value after ':'");
    const char *nonfinite = "': the value is not a finite number; NaN, infinities and "
                            "overflows cannot be used (impute the value, or leave the pair out "
                            "for 0)";
    const char *values[] = {"nan", "-inf", "1e999"};
    for (size_t k = 0; k < 3; k++) {
        char text[64], msg[512];
        snprintf(text, sizeof text, "1 1:1\n1 3:%s\n", values[k]);
        snprintf(msg, sizeof msg, "s.svm:2: '3:%s%s", values[k], nonfinite);
        char what[64];
        snprintf(what, sizeof what, "a value %s", values[k]);
        expect_error(what, text, msg);
    }
    expect_error("qid", "1 qid:4 1:2\n",
                 "s.svm:1: 'qid:4': qid marks ranking data (SVMrank), and gpc classifies; "
                 "remove the qid:N tokens, e.g. with sed 's/ qid:[^ ]*//'");
    expect_error("a label missing", "1 1:2\n1:0.5 2:1\n",
                 "s.svm:2: the line starts with '1:0.5', not a label: every line is 'label "
                 "index:value ...' (a label alone is a case whose features are all 0)");
    expect_error("a plain line among LIBSVM lines", "# c\n1 1:2\n-1 3:1\n1 0.5 0.25\n",
                 "s.svm:4: '0.5' is not index:value: a line of plain numbers, but line 2 is "
                 "LIBSVM 'label index:value ...'; write every line in one format");
    expect_error("a plain token after pairs", "1 1:2 7\n",
                 "s.svm:1: '7' is not index:value; after the label every token is a "
                 "feature's index:value");
    expect_error("an index past 2^20", "1 1:2\n1 1048577:1\n",
                 "s.svm:2: index 1048577 is beyond the 1048576 columns gpc can hold (inputs "
                 "are held densely, a column for every index up to the largest); renumber the "
                 "features that occur as 1, 2, 3, ...");
    expect_error("an index past any integer", "1 123456789012345678901234567890:1\n",
                 "s.svm:1: index 123456789012345678901234567890 is beyond the 1048576 columns "
                 "gpc can hold (inputs are held densely, a column for every index up to the "
                 "largest); renumber the features that occur as 1, 2, 3, ...");
    expect_error("a byte-order mark", "\xef\xbb\xbf" "1 1:2\n",
                 "s.svm:1: a UTF-8 byte-order mark before the label; save the file without it "
                 "(as plain UTF-8 or ASCII)");
    expect_error("a control byte in a label", "1 1:2\n\x01 1:2\n",
                 "s.svm:2: a control character (byte 0x01) in the label; the file looks binary "
                 "or damaged (a label is a number or a word)");
    expect_error("labels alone", "1\n-1\n",
                 "s.svm: no features: every line is a label alone; give the features as "
                 "index:value after each label");
    expect_error("comments only", "# nothing\n\n", "s.svm: empty input, no rows");
}

/* 10^5 rows whose largest index is 2^20: 8.4e11 bytes held densely, refused
 * from the sizes before anything that size is allocated. */
static void test_too_big(void)
{
    const char *line = "1 1048576:1\n";
    size_t n = 100000, ll = strlen(line);
    char *text = malloc(n * ll + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(text + i * ll, line, ll);
    text[n * ll] = '\0';
    gpc_source src;
    gsl_matrix *x = NULL;
    int st = parse(text, &src, &x, NULL);
    const char *head = "s.svm: 100000 rows x 1048576 columns (the largest index) held densely "
                       "would take 839 GB, more than this machine's ";
    const char *tail = " of memory; renumber the features that occur as 1, 2, 3, ..., or use "
                       "fewer rows";
    const char *msg = gpc_errmsg();
    TEST_OK(st == GPC_EINPUT && x == NULL && !strncmp(msg, head, strlen(head)) &&
                strlen(msg) > strlen(tail) && !strcmp(msg + strlen(msg) - strlen(tail), tail),
            "a matrix larger than memory is refused (%s)", msg);
    free(text);
}

int main(void)
{
    test_detection();
    test_hand_written();
    test_round_trip();
    test_dispatch();
    test_zero_based();
    test_errors();
    test_too_big();
    return tap_done();
}
