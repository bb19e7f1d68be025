/* A text matrix read a line at a time into a scratch file (sparse/scratch):
 * its rows are the whole-file reader's (gpc_matrix_read) bit for bit, with
 * the same hash, for whitespace text and CSV with a header, comments,
 * blank lines, CRLF and lone CR line ends; bad text is refused with the
 * whole-file reader's message, naming the file and line; .npy and LIBSVM
 * files are left to the whole-file reader; the scratch file is never seen
 * in its directory. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "io/colnames.h"
#include "io/labels.h"
#include "io/matio.h"
#include "io/npy.h"
#include "sparse/scratch.h"
#include "random_matrix.h"
#include "tap.h"
#include "tmpfiles.h"

static char tmp[] = "/tmp/gpc-scratch-tmp-XXXXXX";

/* Entries of a directory besides . and .. */
static int entries(const char *d)
{
    DIR *h = opendir(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(h));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(h);
    return n;
}

/* The file read both ways: the same rows, bit for bit, and the same hash
 * with the same labels. */
static int same_as_whole(const char *name, size_t *rows)
{
    gsl_matrix *m;
    gpc_rows *r;
    char **names;
    if (gpc_matrix_read(tmp_path(name), &m, NULL) != GPC_OK)
        return 0;
    int st = gpc_rows_open_text(tmp_path(name), &r, &names);
    int same = st == GPC_OK && r && gpc_rows_count(r) == m->size1 &&
               gpc_rows_dim(r) == m->size2;
    double *x = malloc(m->size1 * m->size2 * sizeof *x), *y = malloc(m->size1 * sizeof *y);
    for (size_t i = 0; i < m->size1; i++)
        y[i] = i % 2 ? 1.0 : -1.0;
    same = same && gpc_rows_read(r, 0, m->size1, x) == GPC_OK &&
           memcmp(x, m->data, m->size1 * m->size2 * sizeof *x) == 0;
    gpc_rows *mem = gpc_rows_memory(m->data, m->size1, m->size2, name),
             *ym = gpc_rows_memory(y, m->size1, 1, "y");
    unsigned long long h1 = 0, h2 = 1;
    same = same && gpc_rows_hash(mem, ym, &h1) == GPC_OK && gpc_rows_hash(r, ym, &h2) == GPC_OK &&
           h1 == h2;
    *rows = m->size1;
    gpc_rows_close(mem);
    gpc_rows_close(ym);
    gpc_rows_close(r);
    gpc_colnames_free(names);
    gsl_matrix_free(m);
    free(x);
    free(y);
    return same;
}

/* Both readers refuse the file with the same message, which has want in it. */
static void refused_alike_n(const char *name, const char *text, size_t len, const char *want)
{
    char whole[1024];
    gsl_matrix *m;
    gpc_rows *r;
    char **names;
    tmp_put_bytes(name, text, len);
    int a = gpc_matrix_read(tmp_path(name), &m, NULL);
    snprintf(whole, sizeof whole, "%s", gpc_errmsg());
    int b = gpc_rows_open_text(tmp_path(name), &r, &names);
    TEST_OK(a == GPC_EINPUT && b == GPC_EINPUT && !r && strcmp(whole, gpc_errmsg()) == 0 &&
                strstr(gpc_errmsg(), want),
            "%s is refused as the whole-file reader refuses it: %s", name, gpc_errmsg());
    unlink(tmp_path(name));
}

static void refused_alike(const char *name, const char *text, const char *want)
{
    refused_alike_n(name, text, strlen(text), want);
}

/* The labels file read through its scratch copy gives the classes, their
 * order and names, and each case's class that the whole-file reader gives
 * (checked under header mode mode). */
static int labels_alike(const char *name, const char *text, gpc_header_mode mode)
{
    gpc_labels *l;
    gpc_labels_summary sum;
    gpc_rows *r;
    tmp_put(name, text);
    gpc_matio_set_header(mode);
    int ok = gpc_labels_read_present(tmp_path(name), &l) == GPC_OK;
    gpc_rows_open_labels(tmp_path(name), &r, &sum);
    ok = ok && r && sum.labels->n == l->n && sum.labels->nclasses == l->nclasses &&
         sum.labels->numeric == l->numeric && gpc_rows_count(r) == l->n;
    for (size_t c = 0; ok && c < l->nclasses; c++)
        ok = strcmp(l->names[c], sum.labels->names[c]) == 0;
    double *value = malloc((ok ? sum.ncodes : 1) * sizeof *value), *cls = malloc(
        (ok ? l->n : 1) * sizeof *cls);
    for (size_t k = 0; ok && k < sum.ncodes; k++)
        value[k] = (double)sum.class_of[k];
    if (ok)
        gpc_rows_map_codes(r, value, sum.ncodes);
    ok = ok && gpc_rows_read(r, 0, l->n, cls) == GPC_OK;
    for (size_t i = 0; ok && i < l->n; i++)
        ok = cls[i] == (double)l->cls[i];
    for (size_t c = 0; ok && c < l->nclasses; c++) {
        size_t count = 0;
        for (size_t i = 0; i < l->n; i++)
            count += l->cls[i] == c;
        ok = count == sum.count[c];
    }
    gpc_matio_set_header(GPC_HEADER_AUTO);
    if (r) {
        gpc_labels_free(sum.labels);
        gpc_labels_summary_free(&sum);
    }
    gpc_rows_close(r);
    gpc_labels_free(l);
    free(value);
    free(cls);
    unlink(tmp_path(name));
    return ok;
}

/* The labels file is left to the whole-file reader. */
static int labels_left(const char *name, const char *text, size_t len)
{
    gpc_labels_summary sum;
    gpc_rows *r;
    tmp_put_bytes(name, text, len);
    gpc_rows_open_labels(tmp_path(name), &r, &sum);
    unlink(tmp_path(name));
    return !r && !sum.labels;
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 29);
    TEST_OK(mkdtemp(strcpy(tmp_dir, "/tmp/gpc-scratch-test-XXXXXX")) && mkdtemp(tmp), "directories for the files and the scratch");
    setenv("TMPDIR", tmp, 1);

    /* enough rows for several write buffers (64 KiB: 1638 rows of 5) */
    size_t n = 5000, d = 5, rows;
    gsl_matrix *X = random_matrix(rng, n, d);
    FILE *f = fopen(tmp_path("X.txt"), "w");
    gpc_matrix_write(f, "X.txt", X, GPC_FMT_TEXT);
    fclose(f);
    TEST_OK(same_as_whole("X.txt", &rows) && rows == n,
            "whitespace text: the rows and the hash are the whole-file reader's");
    char *const cols[] = {"a", "b c", "d", "e,f", "g", NULL};
    f = fopen(tmp_path("X.csv"), "w");
    gpc_matrix_write_named(f, "X.csv", X, GPC_FMT_TEXT, cols);
    fclose(f);
    gpc_rows *r;
    char **names;
    int st = gpc_rows_open_text(tmp_path("X.csv"), &r, &names);
    TEST_OK(st == GPC_OK && names && gpc_colnames_count(names) == 5 &&
                !strcmp(names[1], "b c") && !strcmp(names[3], "e,f"),
            "CSV: the header's names, quoted ones too: %s", st ? gpc_errmsg() : "");
    TEST_OK(r && gpc_rows_count(r) == n, "CSV: the header is not a row");
    gpc_rows_close(r);
    gpc_colnames_free(names);
    TEST_OK(same_as_whole("X.csv", &rows) && rows == n,
            "CSV: the rows and the hash are the whole-file reader's");
    TEST_OK(entries(tmp) == 0, "no scratch file is left in TMPDIR");
    st = gpc_rows_open_text(tmp_path("X.txt"), &r, &names);
    TEST_OK(st == GPC_OK && entries(tmp) == 0 && !names,
            "nor seen there while the rows are open; whitespace text has no names");
    gpc_rows_close(r);

    tmp_put("odd.txt", "# a comment\n\n 1 2 3 # after\r\n4\t5 6\r7 8 9\r\r  \n1e-3 -2.5e+10 0x1p-3\r");
    TEST_OK(same_as_whole("odd.txt", &rows) && rows == 4,
            "comments, blank lines, CRLF and lone CR line ends, hex floats: as whole");
    tmp_put("odd.csv", "\xef\xbb\xbf\"x\", y ,z\r\n# made by hand\n1,2,3\r4,5,6\n\n7 , 8,9");
    TEST_OK(same_as_whole("odd.csv", &rows) && rows == 3,
            "CSV with a byte-order mark, a comment, CR and CRLF, blanks around fields: as whole");
    tmp_put("one.txt", "3\n1\n2\n");
    TEST_OK(same_as_whole("one.txt", &rows) && rows == 3, "one column");

    refused_alike("bad.txt", "1 2\n3 4\n5 x\n", "bad.txt:3: 'x' is not a number");
    refused_alike("nan.txt", "1 2\n3 nan\n", "nan.txt:2: non-finite value 'nan'");
    refused_alike("big.csv", "a,b\n1,2\n\n1e999,2\n", "big.csv:4: non-finite value '1e999'");
    refused_alike("ragged.txt", "1 2\n3 4\n5\n", "ragged.txt:3: expected 2 columns, found 1");
    refused_alike("ragged.csv", "a,b\n1,2,3\n", "ragged.csv:2: expected 2 columns, found 3");
    refused_alike("empty.txt", "", "empty.txt: empty input, no rows");
    refused_alike("comments.txt", "# nothing\n\n", "comments.txt: empty input, no rows");
    refused_alike("header.csv", "a,b\n", "header.csv: empty input, no rows");
    refused_alike("words.txt", "a b\n1 2\n", "write the file as CSV");
    refused_alike("hole.csv", "a,b\n1,\n", "hole.csv:2: column 2 (b) is empty");
    refused_alike("bom.txt", "\xef\xbb\xbf" "1 2\n", "bom.txt:1: a UTF-8 byte-order mark");
    refused_alike("quote.csv", "1,\"2\n", "quote.csv:1: field 2 opens a quote");
    refused_alike_n("nul.txt", "1 2\n3 4\0\n", 9, "nul.txt:2: a NUL byte");
    refused_alike_n("nul.csv", "a,b\n1,\0\n", 9, "nul.csv:2: a NUL byte");
    refused_alike("bomcomment.csv", "\xef\xbb\xbf# a comment\na,b\n", "byte-order mark");
    refused_alike("lonecr.txt", "1 2\r3 4\r5 y\r", "lonecr.txt:3: 'y' is not a number");
    TEST_OK(entries(tmp) == 0, "nothing is left in TMPDIR after the refusals");

    /* what the whole-file reader alone reads */
    f = fopen(tmp_path("X.npy"), "wb");
    gpc_npy_write(f, X);
    fclose(f);
    r = (gpc_rows *)1;
    st = gpc_rows_open_text(tmp_path("X.npy"), &r, &names);
    TEST_OK(st == GPC_OK && !r && !names, "a .npy file is left to the whole-file reader");
    tmp_put("s.svm", "# a comment\n+1 1:0.5 3:2\n-1 2:1\n");
    r = (gpc_rows *)1;
    st = gpc_rows_open_text(tmp_path("s.svm"), &r, &names);
    TEST_OK(st == GPC_OK && !r, "so is a LIBSVM file");
    tmp_put("z.svm", "+1\n-1\n+1 2:0.5\n-1 1:1\n");
    r = (gpc_rows *)1;
    st = gpc_rows_open_text(tmp_path("z.svm"), &r, &names);
    TEST_OK(st == GPC_OK && !r && entries(tmp) == 0,
            "and one whose first cases are labels alone, which shows at its first pair");
    unlink(tmp_path("z.svm"));
    TEST_OK(gpc_rows_open_text(tmp_path("none.txt"), &r, &names) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "none.txt: cannot open"),
            "a missing file is refused naming it: %s", gpc_errmsg());

    /* labels: the classes and each case's class, as the whole-file reader */
    TEST_OK(labels_alike("pm.txt", "-1\n1\n1\n-1\n", GPC_HEADER_AUTO), "-1/+1 labels");
    TEST_OK(labels_alike("h01.txt", "# made by hand\nclass\n0\n1\r\n1\r0\n", GPC_HEADER_AUTO),
            "0/1 under a header word, a comment, CRLF and a lone CR");
    TEST_OK(labels_alike("sp.txt", "species\nsetosa\nvirginica\nsetosa\nversicolor\n"
                         "virginica\nversicolor\n", GPC_HEADER_AUTO),
            "words under a header word seen once: the header is dropped");
    TEST_OK(labels_alike("doubt.txt", "odd\nb\nc\nd\nb\n", GPC_HEADER_AUTO),
            "a first word that may be a label: kept");
    TEST_OK(labels_alike("again.txt", "a\nb\na\nb\n", GPC_HEADER_AUTO),
            "a first word seen again: a label");
    TEST_OK(labels_alike("spell.txt", "3\n1.0\n+1\n1\n3.0\n2\n", GPC_HEADER_AUTO),
            "numbers spelt in several ways: one class each, named as first written, by value");
    TEST_OK(labels_alike("yes.txt", "1.0\n2\n1\n1.0\n2\n", GPC_HEADER_YES),
            "--header drops a first number, and the class is named as the cases spell it");
    TEST_OK(labels_alike("no.txt", "class\n0\n1\n", GPC_HEADER_NO),
            "--no-header keeps a first word as a label");
    TEST_OK(labels_alike("one.txt", "1\n", GPC_HEADER_AUTO), "a single label");
    TEST_OK(labels_alike("onecls.txt", "label\n1\n1\n1\n", GPC_HEADER_AUTO),
            "one class under a header");
    char many[20000] = "";
    for (int i = 0; i < 2000; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "c%d\n", (i * 7919) % 500);
    TEST_OK(labels_alike("many.txt", many, GPC_HEADER_AUTO),
            "500 word classes, the table grown several times");
    TEST_OK(labels_left("blank.txt", "1\n\n-1\n", 9) && labels_left("two.txt", "1 2\n", 4) &&
                labels_left("nul.txt", "1\n\0\n", 4) && labels_left("bom.txt", "\xef\xbb\xbf" "1\n", 5) &&
                labels_left("empty.txt", "", 0) && labels_left("com.txt", "# x\n", 4) &&
                labels_left("s.svm", "+1 1:0.5\n-1 2:1\n", 17),
            "labels the whole-file reader refuses or reads itself are left to it");
    TEST_OK(entries(tmp) == 0, "no scratch file is left in TMPDIR by the labels");
    double codes[5] = {0, 2, 1, 3, 0.5}, mapped[5], to[3] = {-1, 7, 1};
    gpc_rows *cr = gpc_rows_memory(codes, 5, 1, "codes");
    gpc_rows_map_codes(cr, to, 3);
    TEST_OK(gpc_rows_read(cr, 0, 3, mapped) == GPC_OK && mapped[0] == -1 && mapped[1] == 1 &&
                mapped[2] == 7,
            "codes read as their values");
    TEST_OK(gpc_rows_read(cr, 2, 2, mapped) == GPC_EINPUT && strstr(gpc_errmsg(), "case 4"),
            "a number beyond the codes is refused naming its case: %s", gpc_errmsg());
    TEST_OK(gpc_rows_read(cr, 4, 1, mapped) == GPC_EINPUT && strstr(gpc_errmsg(), "case 5"),
            "and so is one between two codes: %s", gpc_errmsg());
    gpc_rows_close(cr);

    setenv("TMPDIR", tmp_path("no-such-dir"), 1);
    TEST_OK(gpc_rows_open_text(tmp_path("X.txt"), &r, &names) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "no-such-dir") && strstr(gpc_errmsg(), "TMPDIR"),
            "a scratch directory that does not exist is named, with what to do: %s",
            gpc_errmsg());
    setenv("TMPDIR", "", 1);
    TEST_OK(!strcmp(gpc_scratch_dir(), "/tmp"), "an empty TMPDIR is /tmp");

    const char *files[] = {"X.txt", "X.csv", "odd.txt", "odd.csv", "one.txt", "X.npy", "s.svm"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        unlink(tmp_path(files[i]));
    rmdir(tmp_dir);
    rmdir(tmp);
    gsl_matrix_free(X);
    gsl_rng_free(rng);
    return tap_done();
}
