/* test_matio — matrix files, text and .npy, and atomic outputs.
 *
 * The .npy files read here are built byte by byte in this file (own header
 * padding, own little-endian encoding), so reading is not only checked against
 * the library's own writer.  Files live in a fresh mkdtemp directory that is
 * emptied and removed at the end. */
#include <dirent.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "io/matio.h"
#include "tap.h"
#include "tmpfiles.h"


static int exists(const char *path) { return access(path, F_OK) == 0; }

/* Contents of a whole file (at most size - 1 bytes), NUL-terminated; length returned. */
static size_t slurp_file(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    return n;
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* A .npy image: version major.0, dict padded as numpy does, then n doubles
 * encoded little-endian by hand.  Returns its length. */
static size_t npy_image(unsigned char *out, int major, const char *dict, const double *v, size_t n)
{
    size_t lenbytes = major == 1 ? 2 : 4, pre = 8 + lenbytes;
    size_t hlen = strlen(dict) + 1;
    while ((pre + hlen) % 64)
        hlen++;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    for (size_t k = 0; k < lenbytes; k++)
        out[8 + k] = (unsigned char)(hlen >> (8 * k));
    memset(out + pre, ' ', hlen);
    memcpy(out + pre, dict, strlen(dict));
    out[pre + hlen - 1] = '\n';
    unsigned char *d = out + pre + hlen;
    for (size_t i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, &v[i], 8);
        for (int k = 0; k < 8; k++)
            *d++ = (unsigned char)(bits >> (8 * k));
    }
    return (size_t)(d - out);
}

static void put_npy(const char *name, int major, const char *dict, const double *v, size_t n)
{
    static unsigned char img[8192];
    tmp_put_bytes(name, img, npy_image(img, major, dict, v, n));
}

/* Reading name fails with GPC_EINPUT, a one-line message containing want, no matrix. */
static void expect_fail(const char *name, const char *want)
{
    gsl_matrix *m = (gsl_matrix *)&m; /* must be reset to NULL */
    int st = gpc_matrix_read(tmp_path(name), &m, NULL);
    const char *msg = gpc_errmsg();
    TEST_OK(st == GPC_EINPUT && !m && strstr(msg, want) && !strchr(msg, '\n'),
            "%s fails with '%s' (got %d: %s)", name, want, st, msg);
}


static int matrix_is(const gsl_matrix *m, size_t rows, size_t cols, const double *want)
{
    if (!m || m->size1 != rows || m->size2 != cols)
        return 0;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            if (!same_bits(gsl_matrix_get(m, i, j), want[i * cols + j]))
                return 0;
    return 1;
}

static gsl_matrix *matrix_of(size_t rows, size_t cols, const double *v)
{
    gsl_matrix *m = gsl_matrix_alloc(rows, cols);
    for (size_t k = 0; k < rows * cols; k++)
        m->data[k] = v[k];
    return m;
}

/* ---- formats and round trips ------------------------------------------------ */

static void test_format_parse(void)
{
    gpc_format f = GPC_FMT_NPY;
    TEST_OK(gpc_format_parse("text", &f) == GPC_OK && f == GPC_FMT_TEXT, "format 'text'");
    f = GPC_FMT_NPY;
    TEST_OK(gpc_format_parse("txt", &f) == GPC_OK && f == GPC_FMT_TEXT, "format 'txt'");
    TEST_OK(gpc_format_parse("npy", &f) == GPC_OK && f == GPC_FMT_NPY, "format 'npy'");
    TEST_OK(gpc_format_parse("csv", &f) == GPC_EUSAGE && strstr(gpc_errmsg(), "csv"),
            "format 'csv' is a usage error: %s", gpc_errmsg());
}

static const double AWKWARD[] = {1.0 / 3, 1e-300, -0.0, 5e-324, 1.7976931348623157e308,
                                 3.141592653589793, -2.5e-310, 123456789012345678.0};

/* Write then read back through a stdio tmpfile; exact to the bit. */
static void round_trip(gpc_format fmt, const char *what)
{
    gsl_matrix *m = matrix_of(2, 4, AWKWARD), *back = NULL;
    FILE *f = tmpfile();
    int st = gpc_matrix_write(f, "rt", m, fmt);
    rewind(f);
    int st2 = gpc_matrix_read_stream(f, "rt", &back, NULL);
    TEST_OK(st == GPC_OK && st2 == GPC_OK, "%s round trip reads back (%s)", what,
            st || st2 ? gpc_errmsg() : "ok");
    TEST_OK(matrix_is(back, 2, 4, AWKWARD), "%s round trip is exact, -0 included", what);
    fclose(f);
    gsl_matrix_free(m);
    gsl_matrix_free(back);
}

static void test_text_layout(void)
{
    const double v[] = {1, 0.5, -2, 3, 1e-300, 0.1};
    gsl_matrix *m = matrix_of(2, 3, v);
    FILE *f = tmpfile();
    gpc_matrix_write(f, "layout", m, GPC_FMT_TEXT);
    rewind(f);
    char buf[256];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    TEST_OK(strcmp(buf, "1 0.5 -2\n3 1e-300 0.10000000000000001\n") == 0,
            "text layout: %%.17g, single spaces, no trailing blanks");
    fclose(f);

    /* A view with tda != cols writes only its own elements. */
    gsl_matrix_const_view sub = gsl_matrix_const_submatrix(m, 0, 1, 2, 2);
    f = tmpfile();
    gpc_matrix_write(f, "sub", &sub.matrix, GPC_FMT_NPY);
    rewind(f);
    gsl_matrix *back = NULL;
    gpc_matrix_read_stream(f, "sub", &back, NULL);
    const double want[] = {0.5, -2, 1e-300, 0.1};
    TEST_OK(matrix_is(back, 2, 2, want), "submatrix view written by its own rows");
    fclose(f);
    gsl_matrix_free(back);
    gsl_matrix_free(m);
}

static void test_npy_header_written(void)
{
    gsl_matrix *m = matrix_of(2, 4, AWKWARD);
    FILE *f = tmpfile();
    gpc_matrix_write(f, "hdr", m, GPC_FMT_NPY);
    rewind(f);
    unsigned char b[512];
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    size_t hlen = (size_t)b[8] | (size_t)b[9] << 8, total = 10 + hlen;
    TEST_OK(n >= 10 && memcmp(b, "\x93NUMPY\x01\x00", 8) == 0, "npy starts with magic, v1.0");
    TEST_OK(total % 64 == 0 && total < n && b[total - 1] == '\n',
            "npy header length %zu is a multiple of 64 and ends in newline", total);
    char dict[256]; /* up to the closing brace, to keep the TAP line one line */
    snprintf(dict, sizeof dict, "%.*s", (int)hlen, (const char *)b + 10);
    if (strchr(dict, '}'))
        strchr(dict, '}')[1] = '\0';
    TEST_OK(strstr(dict, "'descr': '<f8'") && strstr(dict, "'fortran_order': False") &&
                strstr(dict, "'shape': (2, 4)"),
            "npy header dict: %s", dict);
    TEST_OK(n == total + 8 * 8, "npy holds exactly 8 values after the header (%zu bytes)", n);
    uint64_t bits = 0;
    for (int k = 7; k >= 0; k--)
        bits = bits << 8 | b[total + 8 + (size_t)k]; /* second value, 1e-300 */
    double x;
    memcpy(&x, &bits, 8);
    TEST_OK(same_bits(x, 1e-300), "npy data is little-endian");
    gsl_matrix_free(m);
}

/* ---- reading --------------------------------------------------------------------- */

static void test_read_text_layout(void)
{
    tmp_put("f.txt", "# header\n\n1\t2 3\r\n   # only comment\n4 5\t6 # trailing\r\n\n7 8e0 -9.5");
    gsl_matrix *m;
    gpc_source src;
    int st = gpc_matrix_read(tmp_path("f.txt"), &m, &src);
    const double want[] = {1, 2, 3, 4, 5, 6, 7, 8, -9.5};
    TEST_OK(st == GPC_OK && matrix_is(m, 3, 3, want),
            "text with comments, blank lines, tabs, CRLF, no final newline (%s)",
            st ? gpc_errmsg() : "ok");
    TEST_OK(st == GPC_OK && src.rows == 3 && src.line && src.line[0] == 3 && src.line[1] == 5 &&
                src.line[2] == 7,
            "source lines of the rows are 3, 5, 7");
    char where[600], want_where[600];
    snprintf(want_where, sizeof want_where, "%s:5", tmp_path("f.txt"));
    TEST_OK(st == GPC_OK && strcmp(gpc_source_where(&src, 1, where, sizeof where), want_where) == 0,
            "where of text row 1 is '%s'", where);
    if (st == GPC_OK) {
        gsl_matrix_free(m);
        gpc_source_free(&src);
    }
    /* old Mac files end lines with a lone CR; CRLF still ends one line */
    tmp_put("mac.txt", "1 2 3\r4 5 6\r\n\r7 8e0 -9.5\r");
    st = gpc_matrix_read(tmp_path("mac.txt"), &m, &src);
    TEST_OK(st == GPC_OK && matrix_is(m, 3, 3, want) && src.line[1] == 2 && src.line[2] == 4,
            "lone CRs end lines, rows on lines 1, 2, 4 (%s)", st ? gpc_errmsg() : "ok");
    if (st == GPC_OK) {
        gsl_matrix_free(m);
        gpc_source_free(&src);
    }
}

static void test_read_npy(void)
{
    const double v[] = {1.5, -2, 3e-310, 4, 5, 6};
    gsl_matrix *m;
    gpc_source src;

    put_npy("one.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", v, 3);
    int st = gpc_matrix_read(tmp_path("one.npy"), &m, &src);
    TEST_OK(st == GPC_OK && matrix_is(m, 3, 1, v), "1-D npy reads as one column (%s)",
            st ? gpc_errmsg() : "ok");
    char where[600], want[600];
    snprintf(want, sizeof want, "%s: row 17", tmp_path("one.npy"));
    TEST_OK(st == GPC_OK && !src.line && src.rows == 3 &&
                strcmp(gpc_source_where(&src, 16, where, sizeof where), want) == 0,
            "where of npy row 16 is '%s'", where);
    if (st == GPC_OK) {
        gsl_matrix_free(m);
        gpc_source_free(&src);
    }

    const struct {
        int major;
        const char *dict;
    } ok[] = {
        {2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"},
        {3, "{\"shape\": (2,3), \"fortran_order\": False, \"descr\": \"<f8\"}"},
        {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L)}"},
    };
    for (size_t k = 0; k < sizeof ok / sizeof *ok; k++) {
        put_npy("v.npy", ok[k].major, ok[k].dict, v, 6);
        st = gpc_matrix_read(tmp_path("v.npy"), &m, NULL);
        TEST_OK(st == GPC_OK && matrix_is(m, 2, 3, v), "npy v%d.0 %s (%s)", ok[k].major,
                ok[k].dict, st ? gpc_errmsg() : "ok");
        if (st == GPC_OK)
            gsl_matrix_free(m);
    }
}

/* Feed bytes through a pipe, as from a shell: nothing can be sought back. */
static FILE *pipe_with(const void *data, size_t len)
{
    int fd[2];
    if (pipe(fd) != 0 || write(fd[1], data, len) != (ssize_t)len)
        exit(99);
    close(fd[1]);
    return fdopen(fd[0], "rb");
}

static void test_pipes(void)
{
    const double v[] = {1, 2, 3, 4};
    unsigned char img[512];
    size_t n = npy_image(img, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }",
                         v, 4);
    gsl_matrix *m;
    gpc_source src;
    FILE *f = pipe_with(img, n);
    int st = gpc_matrix_read_stream(f, "-", &m, &src);
    TEST_OK(st == GPC_OK && matrix_is(m, 2, 2, v) && strcmp(src.name, "<stdin>") == 0,
            "npy from a pipe, named <stdin> (%s)", st ? gpc_errmsg() : "ok");
    fclose(f);
    if (st == GPC_OK) {
        gsl_matrix_free(m);
        gpc_source_free(&src);
    }

    f = pipe_with("1 2\n3 4\n", 8);
    st = gpc_matrix_read_stream(f, NULL, &m, NULL);
    TEST_OK(st == GPC_OK && matrix_is(m, 2, 2, v), "text from a pipe");
    fclose(f);
    if (st == GPC_OK)
        gsl_matrix_free(m);

    f = pipe_with("1 2\nabc 4\n", 10);
    st = gpc_matrix_read_stream(f, "-", &m, NULL);
    TEST_OK(st == GPC_EINPUT && strstr(gpc_errmsg(), "<stdin>:2: 'abc' is not a number"),
            "errors on standard input name <stdin>: %s", gpc_errmsg());
    fclose(f);

    /* "-" as a path is standard input itself. */
    f = pipe_with("5 6\n", 4);
    int saved = dup(0);
    dup2(fileno(f), 0);
    st = gpc_matrix_read("-", &m, NULL);
    const double w[] = {5, 6};
    TEST_OK(st == GPC_OK && matrix_is(m, 1, 2, w), "path '-' reads standard input");
    if (st == GPC_OK)
        gsl_matrix_free(m);
    dup2(saved, 0);
    close(saved);
    clearerr(stdin);
    fclose(f);
}

static void test_text_errors(void)
{
    tmp_put("ragged.txt", "# c\n1 2 3\n4 5\n");
    expect_fail("ragged.txt", "ragged.txt:3: expected 3 columns, found 2");
    tmp_put("word.txt", "1 2\n3 abc\n");
    expect_fail("word.txt", "word.txt:2: 'abc' is not a number");
    tmp_put("suffix.txt", "1.5x 2\n");
    expect_fail("suffix.txt", "suffix.txt:1: '1.5x' is not a number");
    tmp_put("nan.txt", "1 2\r\n3 nan\r\n");
    expect_fail("nan.txt", "nan.txt:2: non-finite value 'nan'");
    tmp_put("NaN.txt", "\n\nNaN 1\n");
    expect_fail("NaN.txt", "NaN.txt:3: non-finite value 'NaN'");
    tmp_put("inf.txt", "inf 1\n");
    expect_fail("inf.txt", "inf.txt:1: non-finite value 'inf'");
    tmp_put("minf.txt", "1 -Infinity\n");
    expect_fail("minf.txt", "minf.txt:1: non-finite value '-Infinity'");
    tmp_put("huge.txt", "1 2\n3 1e999\n");
    expect_fail("huge.txt", "huge.txt:2: non-finite value '1e999'");
    tmp_put("empty.txt", "");
    expect_fail("empty.txt", "empty.txt: empty input, no rows");
    tmp_put("comments.txt", "# nothing\n\n  \t\r\n# here\n");
    expect_fail("comments.txt", "comments.txt: empty input, no rows");
    expect_fail("missing.txt", "missing.txt: cannot open: No such file or directory");
    mkdir(tmp_path("adir"), 0700);
    expect_fail("adir", "adir: is a directory; give a file");

    /* Underflow is not an error: the value is tiny but finite. */
    tmp_put("tiny.txt", "1e-400 4.9e-324\n");
    gsl_matrix *m;
    int st = gpc_matrix_read(tmp_path("tiny.txt"), &m, NULL);
    TEST_OK(st == GPC_OK && gsl_matrix_get(m, 0, 0) == 0, "underflow 1e-400 reads as 0");
    TEST_CLOSE(st == GPC_OK ? gsl_matrix_get(m, 0, 1) : NAN, 5e-324, 0, 0,
               "underflow 4.9e-324 reads as the least subnormal");
    if (st == GPC_OK)
        gsl_matrix_free(m);
}

/* Bytes a message could not show (they are invisible, or print as something
 * else) are named with their line and column instead of quoted. */
static void test_invisible_bytes(void)
{
    tmp_put("bom.txt", "\xef\xbb\xbf" "1 2\n3 4\n");
    expect_fail("bom.txt", "bom.txt:1: a UTF-8 byte-order mark at the start; save the file "
                "without it");
    tmp_put("bom2.txt", "1 2\n\xef\xbb\xbf" "3 4\n");
    expect_fail("bom2.txt", "bom2.txt:2: a UTF-8 byte-order mark at column 1");
    tmp_put_bytes("nul.txt", "1 2\n3 45\0 6\n", 11);
    expect_fail("nul.txt", "nul.txt:2: a NUL byte at column 5; the file looks binary");
    tmp_put_bytes("nul1.txt", "\0\0\0\x01", 4);
    expect_fail("nul1.txt", "nul1.txt:1: a NUL byte at column 1; the file looks binary");
    tmp_put("ctl.txt", "1\x0b" "2 3\n");
    expect_fail("ctl.txt", "ctl.txt:1: a control character (byte 0x0b) at column 2");
    tmp_put("minus.txt", "1 \xe2\x88\x92" "2\n");
    expect_fail("minus.txt", "minus.txt:1: a non-ASCII byte 0xe2 at column 3");
    /* A plain typo is still quoted as it is. */
    tmp_put("typo.txt", "1 2x\n");
    expect_fail("typo.txt", "typo.txt:1: '2x' is not a number");
    /* In a comment any byte is allowed. */
    tmp_put_bytes("cmt.txt", "1 2 # \0\xef\xbb\xbf\n", 11);
    gsl_matrix *m;
    int st = gpc_matrix_read(tmp_path("cmt.txt"), &m, NULL);
    TEST_OK(st == GPC_OK && m && m->size1 == 1 && m->size2 == 2,
            "a NUL and a byte-order mark in a comment are ignored (%d: %s)", st, gpc_errmsg());
    if (st == GPC_OK)
        gsl_matrix_free(m);
}

static void test_npy_errors(void)
{
    const double v[] = {1, 2, 3, 4, NAN, 6, 7, 8};
    put_npy("trunc.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", v, 4);
    expect_fail("trunc.npy", "trunc.npy: truncated .npy: expected 6 values, found 4");
    /* Fortran order, float32 and big-endian are read (test_npy.c); complex is not */
    put_npy("c16.npy", 1, "{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }", v, 4);
    expect_fail("c16.npy", "c16.npy: unsupported dtype '<c16'");
    expect_fail("c16.npy", "astype('<f8')");
    put_npy("rec.npy", 1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }",
            v, 2);
    expect_fail("rec.npy", "rec.npy: unsupported dtype");
    put_npy("nanrow.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", v, 6);
    expect_fail("nanrow.npy", "nanrow.npy: row 3: non-finite value");
    put_npy("zero.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", v, 0);
    expect_fail("zero.npy", "zero.npy: empty input, no rows");
    put_npy("cube.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 2), }", v,
            8);
    expect_fail("cube.npy", "cube.npy: array has 3 dimensions");
    put_npy("scalar.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", v, 1);
    expect_fail("scalar.npy", "array has 0 dimensions");
    put_npy("garbage.npy", 1, "not a dict", v, 4);
    expect_fail("garbage.npy", "garbage.npy: bad .npy header");
    put_npy("noshape.npy", 1, "{'descr': '<f8', 'fortran_order': False}", v, 4);
    expect_fail("noshape.npy", "noshape.npy: bad .npy header");
    put_npy("v4.npy", 4, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", v, 2);
    expect_fail("v4.npy", "v4.npy: unsupported .npy version 4.0");
    tmp_put_bytes("short.npy", "\x93NUMPY\x01\x00\x76\x00{'descr'", 17);
    expect_fail("short.npy", "short.npy: truncated .npy header");
}

/* ---- outputs ----------------------------------------------------------------- */

/* Entries of dir whose names start with prefix. */
static int count_prefix(const char *prefix)
{
    DIR *d = opendir(tmp_dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

static void test_output_commit_abort(void)
{
    char buf[64];
    gpc_output *o;
    int st = gpc_output_open(tmp_path("out.txt"), &o);
    TEST_OK(st == GPC_OK && strcmp(gpc_output_name(o), tmp_path("out.txt")) == 0, "output opens");
    fputs("hello\n", gpc_output_file(o));
    TEST_OK(!exists(tmp_path("out.txt")) && count_prefix("out.txt.tmp") == 1,
            "before commit only a temporary beside the target exists");
    st = gpc_output_commit(o);
    slurp_file(tmp_path("out.txt"), buf, sizeof buf);
    TEST_OK(st == GPC_OK && strcmp(buf, "hello\n") == 0 && count_prefix("out.txt.tmp") == 0,
            "commit puts the whole file in place, no temporary left");

    /* Under umask 027 a new file gets 0640 as from a plain fopen, not
     * mkstemp's 0600; a replaced file keeps its own mode. */
    mode_t old_mask = umask(027);
    gpc_output_open(tmp_path("fresh.txt"), &o);
    fputs("new\n", gpc_output_file(o));
    st = gpc_output_commit(o);
    struct stat sb = {.st_mode = 0};
    stat(tmp_path("fresh.txt"), &sb);
    TEST_OK(st == GPC_OK && (sb.st_mode & 0777) == 0640,
            "a new file has mode 0666 & ~umask (%o)", (unsigned)(sb.st_mode & 0777));
    chmod(tmp_path("out.txt"), 0604);
    gpc_output_open(tmp_path("out.txt"), &o);
    fputs("new\n", gpc_output_file(o));
    st = gpc_output_commit(o);
    umask(old_mask);
    slurp_file(tmp_path("out.txt"), buf, sizeof buf);
    TEST_OK(st == GPC_OK && strcmp(buf, "new\n") == 0, "commit replaces an existing file");
    stat(tmp_path("out.txt"), &sb);
    TEST_OK((sb.st_mode & 0777) == 0604, "a replaced file keeps its mode (%o)",
            (unsigned)(sb.st_mode & 0777));
    unlink(tmp_path("fresh.txt"));

    gpc_output_open(tmp_path("gone.txt"), &o);
    fputs("never\n", gpc_output_file(o));
    gpc_output_abort(o);
    TEST_OK(!exists(tmp_path("gone.txt")) && count_prefix("gone.txt") == 0,
            "abort leaves neither file nor temporary");

    o = (gpc_output *)&o;
    st = gpc_output_open(tmp_path("no/such/dir.txt"), &o);
    TEST_OK(st == GPC_EINPUT && !o && strstr(gpc_errmsg(), "dir.txt: cannot create"),
            "output in a missing directory fails: %s", gpc_errmsg());

    st = gpc_output_open("-", &o);
    TEST_OK(st == GPC_OK && gpc_output_file(o) == stdout &&
                strcmp(gpc_output_name(o), "<stdout>") == 0,
            "output '-' is <stdout>");
    gpc_output_abort(o);
    st = gpc_output_open(NULL, &o);
    TEST_OK(st == GPC_OK && strcmp(gpc_output_name(o), "<stdout>") == 0,
            "output NULL is <stdout>");
    gpc_output_abort(o);
}

static void test_write_errors(void)
{
    gsl_matrix *m = matrix_of(2, 4, AWKWARD);
    FILE *f = fopen("/dev/full", "w");
    if (!f) {
        TEST_OK(1, "# skip: no /dev/full");
        gsl_matrix_free(m);
        return;
    }
    int st = gpc_matrix_write(f, "full.txt", m, GPC_FMT_TEXT);
    TEST_OK(st == GPC_EINPUT &&
                strstr(gpc_errmsg(), "full.txt: write error: No space left on device"),
            "text write to a full disk fails: %s", gpc_errmsg());
    clearerr(f);
    st = gpc_matrix_write(f, "full.npy", m, GPC_FMT_NPY);
    TEST_OK(st == GPC_EINPUT &&
                strstr(gpc_errmsg(), "full.npy: write error: No space left on device"),
            "npy write to a full disk fails: %s", gpc_errmsg());
    fclose(f);
    gsl_matrix_free(m);
}

/* Run fn in a child with fd 1 or 2 replaced by a device; its exit status. */
static int in_child(int (*fn)(void), int fd, const char *device)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int dev = open(device, O_WRONLY);
        dup2(dev, fd);
        _exit(fn());
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int commit_to_full_stdout(void)
{
    gpc_output *o;
    gpc_output_open("-", &o);
    fputs("data\n", gpc_output_file(o));
    int st = gpc_output_commit(o);
    return st == GPC_EINPUT && strstr(gpc_errmsg(), "<stdout>: write error: No space left")
               ? 0
               : 1;
}

static int die_with_open_output(void)
{
    gpc_output *o;
    gpc_output_open(tmp_path("dying.txt"), &o);
    fputs("half\n", gpc_output_file(o));
    gpc_die(GPC_EINPUT, "dying on purpose");
}

static void test_output_failures(void)
{
    TEST_OK(in_child(commit_to_full_stdout, 1, "/dev/full") == 0,
            "commit of '-' with stdout on /dev/full reports the write error");
    int status = in_child(die_with_open_output, 2, "/dev/null");
    TEST_OK(status == GPC_EINPUT && !exists(tmp_path("dying.txt")) && count_prefix("dying.txt") == 0,
            "gpc_die removes open temporaries (status %d)", status);
}

/* ---- a larger file -------------------------------------------------------------- */

/* 4000 x 8 random values written with %.17g read back exactly (reading
 * speed is measured by the benchmarks, not here). */
static void test_large(void)
{
    FILE *f = fopen(tmp_path("big.txt"), "w");
    double *v = malloc(4000 * 8 * sizeof *v);
    srand(7);
    for (int i = 0; i < 4000 * 8; i++) {
        v[i] = rand() / (double)RAND_MAX - 0.5;
        fprintf(f, "%.17g%c", v[i], i % 8 < 7 ? ' ' : '\n');
    }
    fclose(f);
    gsl_matrix *m;
    int st = gpc_matrix_read(tmp_path("big.txt"), &m, NULL), same = 0;
    if (st == GPC_OK && m->size1 == 4000 && m->size2 == 8)
        same = memcmp(m->data, v, 4000 * 8 * sizeof *v) == 0;
    TEST_OK(same, "4000x8 text matrix reads back exactly");
    if (st == GPC_OK)
        gsl_matrix_free(m);
    free(v);
}

/* ---- main ----------------------------------------------------------------------- */

/* The first comment line before the first row is kept as the header
 * (column names); later comments and .npy files have none. */
static void test_header(void)
{
    struct {
        const char *text, *want;
    } cases[] = {{"# p.a p.b label\r\n# label: 1 a\n1 2 3\n", "p.a p.b label"},
                 {"\n  #   x y\n1 2\n# after\n", "x y"},
                 {"1 2\n# after the first row\n", NULL},
                 {"#\n1 2\n", ""}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gsl_matrix *m;
        gpc_source src;
        tmp_put("h.txt", cases[i].text);
        int st = gpc_matrix_read(tmp_path("h.txt"), &m, &src);
        int ok = st == GPC_OK && (cases[i].want ? src.header && !strcmp(src.header, cases[i].want)
                                                : src.header == NULL);
        TEST_OK(ok, "header of case %zu: '%s'", i + 1,
                st == GPC_OK && src.header ? src.header : "(none)");
        if (st == GPC_OK) {
            gsl_matrix_free(m);
            gpc_source_free(&src);
        }
    }
}

/* ---- CSV and column names ------------------------------------------------------ */

/* The names a read gave (NULL-terminated), joined by '|' into buf. */
static const char *joined(char **names, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t j = 0; names && names[j]; j++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", j ? "|" : "", names[j]);
    return names ? buf : "(none)";
}

static void expect_csv(const char *what, const char *text, size_t rows, size_t cols,
                       const double *want, const char *names)
{
    gsl_matrix *m = NULL;
    gpc_source src;
    char buf[256];
    tmp_put("c.csv", text);
    int st = gpc_matrix_read(tmp_path("c.csv"), &m, &src);
    const char *got = st == GPC_OK ? joined(src.colnames, buf, sizeof buf) : gpc_errmsg();
    TEST_OK(st == GPC_OK && matrix_is(m, rows, cols, want) &&
            (names ? !strcmp(got, names) : src.colnames == NULL),
            "CSV %s: %zu x %zu, names %s (got %s)", what, rows, cols, names ? names : "(none)",
            got);
    if (st == GPC_OK) {
        gsl_matrix_free(m);
        gpc_source_free(&src);
    }
}

static void test_csv(void)
{
    const double v[] = {1, 2.5, -3, 4, 5e-3, 6};
    /* as pandas writes DataFrame.to_csv(index=False) */
    expect_csv("with a header", "age,bmi,dose\n1,2.5,-3\n4,0.005,6\n", 2, 3, v, "age|bmi|dose");
    expect_csv("without a header", "1,2.5,-3\n4,5e-3,6\n", 2, 3, v, NULL);
    /* quotes around names with commas and doubled quotes, blanks around
     * fields, CRLF line ends, a byte-order mark as spreadsheets write */
    expect_csv("quoted", "\xef\xbb\xbf\"a, b\", \"say \"\"hi\"\"\" ,c\r\n1, 2.5 ,-3\r\n"
               "\"4\",0.005,6\r\n", 2, 3, v, "a, b|say \"hi\"|c");
    expect_csv("comments and blank lines", "# made by hand\n\nx,y,z\n1,2.5,-3\n\n4,.005,6\n",
               2, 3, v, "x|y|z");
    expect_csv("one column with a quote", "\"w\"\n1\n2.5\n", 2, 1, (const double[]){1, 2.5},
               "w");
    /* a header is any first line with a field that is not a number */
    expect_csv("partly numeric header", "1,x2,3\n1,2.5,-3\n4,0.005,6\n", 2, 3, v, "1|x2|3");

    gpc_matio_set_header(GPC_HEADER_YES); /* pandas' default names 0, 1, 2 */
    expect_csv("numeric header forced", "0,1,2\n1,2.5,-3\n4,0.005,6\n", 2, 3, v, "0|1|2");
    tmp_put("ws.txt", "a b\n1 2\n"); /* whitespace text never has a header */
    expect_fail("ws.txt", "ws.txt:1: 'a' is not a number");
    gpc_matio_set_header(GPC_HEADER_NO);
    tmp_put("no.csv", "x,y\n1,2\n");
    expect_fail("no.csv", "no.csv:1: 'x' is not a number");
    gpc_matio_set_header(GPC_HEADER_AUTO);

    struct {
        const char *text, *want;
    } bad[] = {
        {",a,b\n0,1,2\n", "b.csv:1: column 1 has no name (pandas writes its index so: save "
                          "with index=False"},
        {"a,,b\n0,1,2\n", "b.csv:1: column 2 has no name"},
        {"a,b,a\n0,1,2\n", "b.csv:1: columns 1 and 3 are both named 'a'"},
        {"a,b\n1,2\n3\n", "b.csv:3: expected 2 columns, found 1"},
        {"a,b\n1,2,3\n", "b.csv:2: expected 2 columns, found 3"},
        {"1,2\n3,4,5\n", "b.csv:2: expected 2 columns, found 3"},
        {"a,b\n1,\n", "b.csv:2: column 2 (b) is empty; every value is needed"},
        {"1,2\n,4\n", "b.csv:2: column 1 is empty"},
        {"a,b\n1,NaN\n", "b.csv:2: non-finite value 'NaN'"},
        {"a,b\n1,x\n", "b.csv:2: 'x' is not a number"},
        {"a,b\n1,\"2\n", "b.csv:2: field 2 opens a quote that the line does not close"},
        {"a,b\n\"1\"x,2\n", "b.csv:2: text after the closing quote of field 1"},
        {"a,b\n", "b.csv: empty input, no rows"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tmp_put("b.csv", bad[i].text);
        expect_fail("b.csv", bad[i].want);
    }
    /* whitespace text with a line of names gets a hint, and stays refused */
    tmp_put("w.txt", "age bmi\n1 2\n");
    expect_fail("w.txt", "w.txt:1: 'age' is not a number (if that line names the columns, "
                         "write the file as CSV, or make the line a comment with '#')");
}

/* Names written under a CSV header come back as they were: quoted where a
 * reader would split, trim or skip them, or not see CSV at all. */
static void named_round_trip(const char *what, size_t cols, char *const *names)
{
    gsl_matrix *m = gsl_matrix_alloc(2, cols), *back = NULL;
    for (size_t k = 0; k < 2 * cols; k++)
        m->data[k] = (double)k / 3;
    FILE *f = fopen(tmp_path("named.csv"), "w");
    int st = gpc_matrix_write_named(f, "named.csv", m, GPC_FMT_TEXT, names);
    fclose(f);
    gpc_source src;
    if (st == GPC_OK)
        st = gpc_matrix_read(tmp_path("named.csv"), &back, &src);
    int same = st == GPC_OK && matrix_is(back, 2, cols, m->data) && src.colnames;
    for (size_t j = 0; same && j < cols; j++)
        same = src.colnames[j] && !strcmp(src.colnames[j], names[j]);
    TEST_OK(same, "CSV names written and read back: %s (%s)", what, st ? gpc_errmsg() : "ok");
    if (st == GPC_OK) {
        gsl_matrix_free(back);
        gpc_source_free(&src);
    }
    gsl_matrix_free(m);
}

static void test_csv_written(void)
{
    named_round_trip("plain", 2, (char *const[]){"age", "bmi", NULL});
    named_round_trip("one column", 1, (char *const[]){"w", NULL});
    named_round_trip("commas, quotes, blanks, '#'", 3,
                     (char *const[]){"a, b", " say \"hi\"", "#c", NULL});
    named_round_trip("a byte-order mark in the first name", 2,
                     (char *const[]){"\xef\xbb\xbfx", "y", NULL});
}

static void remove_dir(void)
{
    DIR *d = opendir(tmp_dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            const char *p = tmp_path(e->d_name);
            if (unlink(p) != 0)
                rmdir(p);
        }
    if (d)
        closedir(d);
    TEST_OK(rmdir(tmp_dir) == 0, "test directory removed, nothing left behind");
}

int main(void)
{
    if (!mkdtemp(strcpy(tmp_dir, "/tmp/gpc_test_matio_XXXXXX"))) {
        perror("mkdtemp");
        return 99;
    }
    test_format_parse();
    round_trip(GPC_FMT_TEXT, "text");
    round_trip(GPC_FMT_NPY, "npy");
    test_text_layout();
    test_npy_header_written();
    test_read_text_layout();
    test_read_npy();
    test_pipes();
    test_header();
    test_csv();
    test_csv_written();
    test_text_errors();
    test_invisible_bytes();
    test_npy_errors();
    test_output_commit_abort();
    test_write_errors();
    test_output_failures();
    test_large();
    remove_dir();
    return tap_done();
}
