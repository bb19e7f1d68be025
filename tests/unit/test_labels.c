/* test_labels — class labels of any kind: words, codes, their order, the
 * binary coding, labels against a model's classes, and every bad file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "io/labels.h"
#include "io/matio.h"
#include "tap.h"

static char dir[] = "/tmp/gpc_test_labels_XXXXXX";

static const char *P(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

static const char *put(const char *name, const char *text, size_t len)
{
    FILE *f = fopen(P(name), "wb");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
        perror(P(name));
        exit(99);
    }
    return P(name);
}

static const char *put_text(const char *name, const char *text)
{
    return put(name, text, strlen(text));
}

/* Read text as training labels and check the classes (space-separated
 * names in order) and the class index of every case. */
static void expect_classes(const char *what, const char *text, const char *names,
                           const size_t *cls, size_t n)
{
    gpc_labels *l;
    int st = gpc_labels_read(put_text("l.txt", text), &l);
    if (!TEST_OK(st == GPC_OK, "%s: read (%s)", what, st ? gpc_errmsg() : "ok"))
        return;
    char got[256] = "";
    for (size_t c = 0; c < l->nclasses; c++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", c ? " " : "",
                 l->names[c]);
    TEST_OK(strcmp(got, names) == 0, "%s: classes '%s' (want '%s')", what, got, names);
    int same = l->n == n;
    for (size_t i = 0; same && i < n; i++)
        same = l->cls[i] == cls[i];
    TEST_OK(same, "%s: every case in its class", what);
    gpc_labels_free(l);
}

static void expect_error(const char *what, const char *text, size_t len, const char *message)
{
    gpc_labels *l = NULL;
    int st = gpc_labels_read(put("bad.txt", text, len), &l);
    TEST_OK(st == GPC_EINPUT && l == NULL && strstr(gpc_errmsg(), message) != NULL,
            "%s: error '%s' (got %d: %s)", what, message, st, gpc_errmsg());
}

static void test_kinds(void)
{
    expect_classes("words", "setosa\nvirginica\nsetosa\nversicolor\n",
                   "setosa versicolor virginica", (size_t[]){0, 2, 0, 1}, 4);
    expect_classes("codes sort by value, not as text", "10\n9\n10\n100\n", "9 10 100",
                   (size_t[]){1, 0, 1, 2}, 4);
    expect_classes("codes 3 5 7", "7\n3\n5\n", "3 5 7", (size_t[]){2, 0, 1}, 3);
    expect_classes("+1 and 1 are one class, spelt as first written", "+1\n-1\n1\n1.0\n",
                   "-1 +1", (size_t[]){1, 0, 1, 1}, 4);
    expect_classes("numbers mixed with words sort as text", "b\n1\na\n", "1 a b",
                   (size_t[]){2, 0, 1}, 3);
    expect_classes("comments, blanks around a label, CRLF and no final newline",
                   "# header\n  yes \t\r\nno\r\n# more\nyes", "no yes", (size_t[]){1, 0, 1}, 3);
}

static void test_binary(void)
{
    const char *texts[] = {"1\n-1\n-1\n", "1\n0\n0\n", "yes\nno\nno\n", "2\n1\n1\n"};
    for (size_t k = 0; k < 4; k++) {
        gpc_labels *l;
        if (!TEST_OK(gpc_labels_read(put_text("b.txt", texts[k]), &l) == GPC_OK,
                     "binary %zu read", k))
            continue;
        gsl_vector *y = gpc_labels_binary(l);
        TEST_OK(l->nclasses == 2 && gsl_vector_get(y, 0) == 1 && gsl_vector_get(y, 1) == -1 &&
                    gsl_vector_get(y, 2) == -1,
                "binary %zu: the later class (%s) is +1", k, l->names[1]);
        gsl_vector_free(y);
        gpc_labels_free(l);
    }
}

static void test_npy(void)
{
    gsl_matrix *m = gsl_matrix_alloc(4, 1);
    double v[] = {3, 1, 3, 2};
    for (size_t i = 0; i < 4; i++)
        gsl_matrix_set(m, i, 0, v[i]);
    FILE *f = fopen(P("l.npy"), "wb");
    int st = gpc_matrix_write(f, "l.npy", m, GPC_FMT_NPY);
    fclose(f);
    gsl_matrix_free(m);
    gpc_labels *l;
    if (!TEST_OK(st == GPC_OK && gpc_labels_read(P("l.npy"), &l) == GPC_OK, "a .npy column"))
        return;
    TEST_OK(l->numeric && l->nclasses == 3 && !strcmp(l->names[0], "1") &&
                !strcmp(l->names[2], "3") && l->cls[0] == 2 && l->cls[3] == 1,
            ".npy labels are numbers 1 2 3");
    gpc_labels_free(l);
}

static void test_errors(void)
{
    expect_error("a blank line", "a\n\nb\n", 5, "bad.txt:2: blank line");
    expect_error("a blank line of spaces", "a\nb\n  \t\na\n", 10, "bad.txt:3: blank line");
    expect_error("two labels on a line", "a\nb c\n", 6, "bad.txt:2: expected one label");
    expect_error("one class", "a\na\n# c\na\n", 10, "needs cases of at least two classes");
    expect_error("no labels", "# nothing\n", 10, "bad.txt: no labels");
    expect_error("empty", "", 0, "bad.txt: no labels");
    expect_error("a NUL byte", "a\nb\0\n", 5, "bad.txt:2: a NUL byte");
    expect_error("a byte-order mark", "\xef\xbb\xbf" "1\n-1\n", 8,
                 "bad.txt:1: a UTF-8 byte-order mark at the start");
    gpc_labels *l = NULL;
    TEST_OK(gpc_labels_read(dir, &l) == GPC_EINPUT && strstr(gpc_errmsg(), "is a directory"),
            "a directory is an input error (%s)", gpc_errmsg());
    TEST_OK(gpc_labels_read(P("missing.txt"), &l) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "missing.txt: cannot open"),
            "a missing file is an input error (%s)", gpc_errmsg());
}

static void test_model_classes(void)
{
    char *names[] = {"1", "2", "3"};
    gpc_labels *l;
    int st = gpc_labels_read_classes(put_text("t.txt", "3\n1.0\n3\n"), names, 3, &l);
    if (TEST_OK(st == GPC_OK, "test labels with a class missing (%s)", st ? gpc_errmsg() : ""))
        TEST_OK(l->nclasses == 3 && l->cls[0] == 2 && l->cls[1] == 0 && l->cls[2] == 2 &&
                    !strcmp(l->names[1], "2"),
                "they keep the model's classes, 1.0 found as 1");
    gpc_labels_free(l);
    l = NULL;
    st = gpc_labels_read_classes(put_text("t.txt", "3\n4\n"), names, 3, &l);
    TEST_OK(st == GPC_EINPUT && !l && strstr(gpc_errmsg(), "t.txt:2: label '4' is not one of "
                                                          "the model's classes (1 2 3)"),
            "an unknown label names its line and the classes (%s)", gpc_errmsg());
    char *words[] = {"no", "yes"};
    st = gpc_labels_read_classes(put_text("t.txt", "yes\n1\n"), words, 2, &l);
    TEST_OK(st == GPC_EINPUT && strstr(gpc_errmsg(), "t.txt:2: label '1'"),
            "a number among word classes is unknown (%s)", gpc_errmsg());
    TEST_OK(gpc_labels_find(names, 3, 1, "+2") == 1 && gpc_labels_find(names, 3, 1, "x") == -1 &&
                gpc_labels_find(words, 2, 0, "yes") == 1,
            "gpc_labels_find by value and by word");
}

/* One class is enough for gpc_labels_read_present, never for
 * gpc_labels_read. */
static void test_present(void)
{
    gpc_labels *l = NULL;
    int st = gpc_labels_read_present(put_text("l.txt", "yes\n# note\nyes\n"), &l);
    if (TEST_OK(st == GPC_OK, "one class read as present (%s)", st ? gpc_errmsg() : "ok")) {
        TEST_OK(l->n == 2 && l->nclasses == 1 && strcmp(l->names[0], "yes") == 0 &&
                    l->cls[0] == 0 && l->cls[1] == 0, "one class 'yes', both cases in it");
        gpc_labels_free(l);
    }
    st = gpc_labels_read(put_text("l.txt", "yes\nyes\n"), &l);
    TEST_OK(st == GPC_EINPUT && strstr(gpc_errmsg(), "at least two classes"),
            "one class refused as training labels");
    st = gpc_labels_read_present(put_text("l.txt", "yes\n\nyes\n"), &l);
    TEST_OK(st == GPC_EINPUT && strstr(gpc_errmsg(), "l.txt:2: blank line"),
            "present: a blank line still refused with its line");
}

/* Labels parsed from text in memory are those the file gives, the text is
 * left as it was (the caller cuts it next), and errors name the name given. */
static void test_parse(void)
{
    static const char text[] = "# kind\nb\na\nb\n";
    char copy[sizeof text];
    memcpy(copy, text, sizeof text);
    gpc_labels *l = NULL, *f = NULL;
    int st = gpc_labels_parse(copy, sizeof text - 1, "y.txt", &l);
    st |= gpc_labels_read_present(put_text("l.txt", text), &f);
    if (TEST_OK(st == GPC_OK, "parsed and read (%s)", st ? gpc_errmsg() : "ok")) {
        TEST_OK(l->n == 3 && l->nclasses == 2 && !strcmp(l->names[0], "a") &&
                    memcmp(l->cls, f->cls, 3 * sizeof *l->cls) == 0,
                "the classes and cases of the file");
        TEST_OK(memcmp(copy, text, sizeof text) == 0, "the text is unchanged");
    }
    gpc_labels_free(l);
    gpc_labels_free(f);
    static const char svm[] = "+1 1:0.5\n-1 3:2\n";
    st = gpc_labels_parse(svm, sizeof svm - 1, "s.svm", &l);
    if (TEST_OK(st == GPC_OK, "a LIBSVM text's labels (%s)", st ? gpc_errmsg() : "ok"))
        TEST_OK(l->n == 2 && l->cls[0] == 1 && l->cls[1] == 0, "its first tokens");
    gpc_labels_free(l);
    st = gpc_labels_parse("a\n\nb\n", 5, "<stdin>", &l);
    TEST_OK(st == GPC_EINPUT && l == NULL && strstr(gpc_errmsg(), "<stdin>:2: blank line"),
            "an error names the name given: %s", gpc_errmsg());
}

/* Labels where most classes have one case (three or more classes, more than
 * half of the cases alone in their class) cannot train a classifier: an ID
 * column given in place of the classes. */
static void expect_training(const char *what, const char *text, size_t single, int ok)
{
    gpc_labels *l;
    if (!TEST_OK(gpc_labels_read(put_text("l.txt", text), &l) == GPC_OK, "%s: read", what))
        return;
    int st = gpc_labels_check_training(l, "y.txt");
    TEST_OK(gpc_labels_single(l) == single && st == (ok ? GPC_OK : GPC_EINPUT),
            "%s: %zu single (want %zu), %s (%s)", what, gpc_labels_single(l), single,
            ok ? "accepted" : "refused", st ? gpc_errmsg() : "ok");
    gpc_labels_free(l);
}

static void test_training(void)
{
    expect_training("an ID column", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", 10, 0);
    TEST_OK(strcmp(gpc_errmsg(), "y.txt: 10 classes for 10 cases, and 10 of the cases are the "
                   "only one of their class: is this a column of IDs or of measurements? give "
                   "the column of class labels (three or more classes with more than half of "
                   "the cases alone in their class are refused)") == 0,
            "the message says what is wrong and what to give (%s)", gpc_errmsg());
    expect_training("three classes, one case each", "a\nb\nc\n", 3, 0);
    expect_training("3 of 5 cases alone in their class", "a\na\nb\nc\nd\n", 3, 0);
    expect_training("IDs, some of them twice, are refused too",
                    "1\n1\n2\n2\n3\n4\n5\n6\n7\n8\n", 6, 0);
    expect_training("2 of 4 cases: half is not most", "yes\nno\nmaybe\nyes\n", 2, 1);
    expect_training("2 of 5", "a\na\na\nb\nc\n", 2, 1);
    expect_training("one of three classes", "a\na\nb\nb\nc\n", 1, 1);
    expect_training("two classes of one case each: binary", "-1\n1\n", 2, 1);
    expect_training("iris-like", "s\ns\nv\nv\ng\ng\n", 0, 1);
}

/* A word seen once above words of classes seen twice is the column's
 * name; with a single class below it, it may be a rare class and stays. */
static void test_header_word(void)
{
    size_t abc[] = {0, 1, 0, 1, 2, 2};
    expect_classes("'class' above words", "class\na\nb\na\nb\nc\nc\n", "a b c", abc, 6);
    size_t rare[] = {3, 0, 1, 0, 2};
    gpc_verbosity = 0; /* the warning */
    expect_classes("a rare class among single ones", "z\na\nb\na\nc\n", "a b c z", rare, 5);
    gpc_matio_set_header(GPC_HEADER_NO);
    size_t kept[] = {3, 0, 1, 0, 1, 2, 2};
    expect_classes("--no-header keeps it", "class\na\nb\na\nb\nc\nc\n", "a b c class", kept, 7);
    gpc_matio_set_header(GPC_HEADER_AUTO);
}

/* The label column of a data file: by name, by number, left out of the
 * matrix and its names, or kept in place as a number or NaN. */
static void test_label_column(void)
{
    const char *csv = put_text("t.txt", "a,target,b\n1,yes,2\n3,no,4\n5,yes,6\n");
    gpc_read_opts opts = {.label_column = "target"};
    gsl_matrix *X;
    gpc_source src;
    char **tok;
    size_t col;
    int st = gpc_matrix_read_with(csv, &opts, &X, &src, &tok, &col);
    if (TEST_OK(st == GPC_OK, "label column by name (%s)", st ? gpc_errmsg() : "ok")) {
        TEST_OK(X->size1 == 3 && X->size2 == 2 && gsl_matrix_get(X, 2, 1) == 6.0 && col == 2,
                "the other columns are the inputs");
        TEST_OK(!strcmp(tok[0], "yes") && !strcmp(tok[1], "no") && !tok[3], "the labels as written");
        TEST_OK(!strcmp(src.colnames[0], "a") && !strcmp(src.colnames[1], "b") &&
                !src.colnames[2], "the names without the label column's");
        gsl_matrix_free(X);
        gpc_source_free(&src);
        for (size_t i = 0; tok[i]; i++)
            free(tok[i]);
        free(tok);
    }
    opts.label_column = "2";
    opts.keep_place = 1;
    st = gpc_matrix_read_with(csv, &opts, &X, NULL, NULL, &col);
    if (TEST_OK(st == GPC_OK, "label column by number, kept in place")) {
        TEST_OK(X->size2 == 3 && isnan(gsl_matrix_get(X, 0, 1)) && col == 2, "a word is NaN");
        gsl_matrix_free(X);
    }
    const char *bad[][2] = {{"zz", "no column has that name (the columns are a, target, b)"},
                            {"4", "but the file has 3 columns"}};
    for (size_t k = 0; k < 2; k++) {
        gpc_read_opts o = {.label_column = bad[k][0]};
        st = gpc_matrix_read_with(csv, &o, &X, NULL, NULL, NULL);
        TEST_OK(st == GPC_EINPUT && strstr(gpc_errmsg(), bad[k][1]), "--label-column=%s: %s",
                bad[k][0], gpc_errmsg());
    }
    const char *gap = put_text("t.txt", "a,target\n1,yes\n3,\n");
    st = gpc_matrix_read_with(gap, &opts, &X, NULL, NULL, NULL);
    TEST_OK(st == GPC_EINPUT && strstr(gpc_errmsg(), "t.txt:3: the label"), "an empty label: %s",
            gpc_errmsg());
    const char *pred = put_text("t.txt", "# p mean var label\n0.5 1 2 yes\n0.25 1 2 -1\n");
    gpc_read_opts po = {.label_column = "label", .optional = 1, .keep_place = 1};
    st = gpc_matrix_read_with(pred, &po, &X, NULL, NULL, NULL);
    if (TEST_OK(st == GPC_OK, "predictions with a word label column")) {
        TEST_OK(isnan(gsl_matrix_get(X, 0, 3)) && gsl_matrix_get(X, 1, 3) == -1.0,
                "a number stays a number");
        gsl_matrix_free(X);
    }
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 99;
    }
    gpc_gsl_quiet();
    test_kinds();
    test_binary();
    test_npy();
    test_errors();
    test_model_classes();
    test_present();
    test_parse();
    test_training();
    test_header_word();
    test_label_column();
    const char *files[] = {"l.txt", "b.txt", "bad.txt", "l.npy", "t.txt"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        unlink(P(files[i]));
    rmdir(dir);
    return tap_done();
}
