/* test_npy — the .npy reader on every dtype numpy and pandas write for
 * numbers and labels, in C and Fortran order and both byte orders, and the
 * refusals of what it cannot read exactly.
 *
 * Every file here is built byte by byte: the header by this file's own
 * padding, the data as hand-written bytes whose values are worked out in the
 * comments beside them (IEEE 754 bit patterns, two's complement, UTF-32), so
 * nothing is checked against the library's own encoding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "io/labels.h"
#include "io/npy.h"
#include "tap.h"

/* ---- building files -------------------------------------------------------- */

static unsigned char img[1 << 16];

/* A version 1.0 image of the given dict fields, padded with blanks to a
 * newline so that the data start at a multiple of 64 bytes, then the n
 * bytes of data; its length. */
static size_t npy(const char *descr, const char *fortran, const char *shape, const char *data,
                  size_t n)
{
    char dict[256];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr,
             fortran, shape);
    size_t hlen = strlen(dict) + 1;
    while ((10 + hlen) % 64)
        hlen++;
    memcpy(img, "\x93NUMPY\x01\x00", 8);
    img[8] = (unsigned char)(hlen & 0xff);
    img[9] = (unsigned char)(hlen >> 8);
    memset(img + 10, ' ', hlen);
    memcpy(img + 10, dict, strlen(dict));
    img[10 + hlen - 1] = '\n';
    memcpy(img + 10 + hlen, data, n);
    return 10 + hlen + n;
}

/* The data bytes of a string literal (which may hold NULs) and their count. */
#define BYTES(s) s, sizeof s - 1

/* ---- matrices ------------------------------------------------------------------ */

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* The image reads as a rows x cols matrix equal to want bit for bit. */
static void expect_matrix(const char *what, size_t len, size_t rows, size_t cols,
                          const double *want)
{
    gpc_source src = {.name = "t.npy"};
    gsl_matrix *m = NULL;
    int st = gpc_npy_read(img, len, &src, &m);
    if (!TEST_OK(st == GPC_OK, "%s: read (%s)", what, st ? gpc_errmsg() : "ok"))
        return;
    int same = m->size1 == rows && m->size2 == cols && src.rows == rows;
    for (size_t i = 0; same && i < rows; i++)
        for (size_t j = 0; same && j < cols; j++)
            if (!same_bits(gsl_matrix_get(m, i, j), want[i * cols + j])) {
                printf("#   (%zu,%zu): got %.17g, want %.17g\n", i, j, gsl_matrix_get(m, i, j),
                       want[i * cols + j]);
                same = 0;
            }
    TEST_OK(same, "%s: %zu x %zu values exact (got %zu x %zu)", what, rows, cols, m->size1,
            m->size2);
    gsl_matrix_free(m);
}

/* The image is refused with exactly the message want, one line, no matrix. */
static void expect_refused(const char *what, size_t len, const char *want)
{
    gpc_source src = {.name = "t.npy"};
    gsl_matrix *m = NULL;
    int st = gpc_npy_read(img, len, &src, &m);
    const char *msg = st == GPC_OK ? "(read)" : gpc_errmsg();
    if (!TEST_OK(st == GPC_EINPUT && !m && strcmp(msg, want) == 0, "%s: refused", what))
        printf("#   got:  %s\n#   want: %s\n", msg, want);
    if (m)
        gsl_matrix_free(m);
}

static void test_floats(void)
{
    /* 1.5 = 1.1b x 2^0: f8 0x3ff8000000000000, f4 0x3fc00000, f2 0x3e00.
     * -2.25 = -1.001b x 2^1: f8 0xc002000000000000, f4 0xc0100000, f2 0xc080.
     * 1024 = 2^10: f8 0x4090000000000000, f4 0x44800000, f2 0x6400.
     * 0.1f = f4 0x3dcccccd = 13421773 x 2^-27 = 0.100000001490116119384765625. */
    const double want[] = {1.5, -2.25, 1024, 0.100000001490116119384765625};
    size_t n = npy("<f8", "False", "(2, 2)",
                   BYTES("\0\0\0\0\0\0\xf8\x3f" "\0\0\0\0\0\0\x02\xc0"
                         "\0\0\0\0\0\0\x90\x40" "\0\0\0\xa0\x99\x99\xb9\x3f"));
    /* 0x3fb99999a0000000 is 0.1f widened: exponent 0x3fb = -4, fraction
     * 0x99999a0000000 = 0x4ccccd << 29, the f4 fraction shifted up */
    expect_matrix("<f8", n, 2, 2, want);
    n = npy(">f8", "False", "(2, 2)",
            BYTES("\x3f\xf8\0\0\0\0\0\0" "\xc0\x02\0\0\0\0\0\0"
                  "\x40\x90\0\0\0\0\0\0" "\x3f\xb9\x99\x99\xa0\0\0\0"));
    expect_matrix(">f8", n, 2, 2, want);
    n = npy("<f4", "False", "(2, 2)",
            BYTES("\0\0\xc0\x3f" "\0\0\x10\xc0" "\0\0\x80\x44" "\xcd\xcc\xcc\x3d"));
    expect_matrix("<f4", n, 2, 2, want);
    n = npy(">f4", "False", "(2, 2)",
            BYTES("\x3f\xc0\0\0" "\xc0\x10\0\0" "\x44\x80\0\0" "\x3d\xcc\xcc\xcd"));
    expect_matrix(">f4", n, 2, 2, want);
    /* f2: 1.5, -2.25, 1024; 0x0001 = 2^-24 (smallest subnormal); 0x7bff =
     * 65504 (largest); 0x8000 = -0 */
    const double half[] = {1.5, -2.25, 1024, 5.9604644775390625e-08, 65504, -0.0};
    n = npy("<f2", "False", "(3, 2)",
            BYTES("\x00\x3e" "\x80\xc0" "\x00\x64" "\x01\x00" "\xff\x7b" "\x00\x80"));
    expect_matrix("<f2", n, 3, 2, half);
    n = npy(">f2", "False", "(3, 2)",
            BYTES("\x3e\x00" "\xc0\x80" "\x64\x00" "\x00\x01" "\x7b\xff" "\x80\x00"));
    expect_matrix(">f2", n, 3, 2, half);

    /* non-finite values stay refused, in every width: f4 NaN 0x7fc00000 in
     * row 2, f2 +inf 0x7c00 in row 3, >f8 -inf 0xfff0000000000000 in row 1 */
    n = npy("<f4", "False", "(2, 2)", BYTES("\0\0\0\0" "\0\0\0\0" "\0\0\xc0\x7f" "\0\0\0\0"));
    expect_refused("<f4 NaN", n, "t.npy: row 2: non-finite value");
    n = npy("<f2", "False", "(3,)", BYTES("\0\0" "\0\0" "\x00\x7c"));
    expect_refused("<f2 inf", n, "t.npy: row 3: non-finite value");
    n = npy(">f8", "False", "(1, 1)", BYTES("\xff\xf0\0\0\0\0\0\0"));
    expect_refused(">f8 -inf", n, "t.npy: row 1: non-finite value");
}

static void test_integers(void)
{
    /* one byte: 0x80 = -128, 0x7f = 127, 0xff = -1 as i1 and 255 as u1 */
    size_t n = npy("|i1", "False", "(2, 2)", BYTES("\x80\x7f\xff\x00"));
    expect_matrix("|i1", n, 2, 2, (const double[]){-128, 127, -1, 0});
    n = npy("|u1", "False", "(2, 2)", BYTES("\x80\x7f\xff\x00"));
    expect_matrix("|u1", n, 2, 2, (const double[]){128, 127, 255, 0});
    /* two bytes: 0xfffe = -2, 0x012c = 300, 0x8000 = -32768 (i2) or 32768 (u2) */
    const double i2[] = {-2, 300, -32768}, u2[] = {65534, 300, 32768};
    n = npy("<i2", "False", "(3,)", BYTES("\xfe\xff" "\x2c\x01" "\x00\x80"));
    expect_matrix("<i2", n, 3, 1, i2);
    n = npy(">i2", "False", "(3,)", BYTES("\xff\xfe" "\x01\x2c" "\x80\x00"));
    expect_matrix(">i2", n, 3, 1, i2);
    n = npy("<u2", "False", "(3,)", BYTES("\xfe\xff" "\x2c\x01" "\x00\x80"));
    expect_matrix("<u2", n, 3, 1, u2);
    n = npy(">u2", "False", "(3,)", BYTES("\xff\xfe" "\x01\x2c" "\x80\x00"));
    expect_matrix(">u2", n, 3, 1, u2);
    /* four bytes: 0xfffe7960 = -100000 (2^32 - 100000 = 4294867296 as u4),
     * 0x7fffffff = 2147483647 */
    const double i4[] = {-100000, 2147483647}, u4[] = {4294867296, 2147483647};
    n = npy("<i4", "False", "(1, 2)", BYTES("\x60\x79\xfe\xff" "\xff\xff\xff\x7f"));
    expect_matrix("<i4", n, 1, 2, i4);
    n = npy(">i4", "False", "(1, 2)", BYTES("\xff\xfe\x79\x60" "\x7f\xff\xff\xff"));
    expect_matrix(">i4", n, 1, 2, i4);
    n = npy("<u4", "False", "(1, 2)", BYTES("\x60\x79\xfe\xff" "\xff\xff\xff\x7f"));
    expect_matrix("<u4", n, 1, 2, u4);
    n = npy(">u4", "False", "(1, 2)", BYTES("\xff\xfe\x79\x60" "\x7f\xff\xff\xff"));
    expect_matrix(">u4", n, 1, 2, u4);
    /* eight bytes, up to 2^53 = 0x0020000000000000 = 9007199254740992 in
     * magnitude; -2^53 = 0xffe0000000000000; 0xfffffffffffffff9 = -7 */
    const double i8[] = {9007199254740992.0, -9007199254740992.0, -7};
    n = npy("<i8", "False", "(3,)",
            BYTES("\0\0\0\0\0\0\x20\0" "\0\0\0\0\0\0\xe0\xff" "\xf9\xff\xff\xff\xff\xff\xff\xff"));
    expect_matrix("<i8", n, 3, 1, i8);
    n = npy(">i8", "False", "(3,)",
            BYTES("\0\x20\0\0\0\0\0\0" "\xff\xe0\0\0\0\0\0\0" "\xff\xff\xff\xff\xff\xff\xff\xf9"));
    expect_matrix(">i8", n, 3, 1, i8);
    n = npy("<u8", "False", "(2,)", BYTES("\0\0\0\0\0\0\x20\0" "\x07\0\0\0\0\0\0\0"));
    expect_matrix("<u8", n, 2, 1, (const double[]){9007199254740992.0, 7});
    n = npy(">u8", "False", "(2,)", BYTES("\0\x20\0\0\0\0\0\0" "\0\0\0\0\0\0\0\x07"));
    expect_matrix(">u8", n, 2, 1, (const double[]){9007199254740992.0, 7});
    /* bools: 0 and 1, and any other byte is True as numpy reads it */
    n = npy("|b1", "False", "(2, 2)", BYTES("\x00\x01\x01\x02"));
    expect_matrix("|b1", n, 2, 2, (const double[]){0, 1, 1, 1});
}

static void test_inexact_integers(void)
{
    const char *advice = "scale the column down, or save arr.astype('<f8') to accept the rounding";
    char want[512];
    /* 2^53 + 1 = 0x0020000000000001, between the doubles 2^53 and 2^53 + 2 */
    size_t n = npy("<i8", "False", "(2,)", BYTES("\0\0\0\0\0\0\0\0" "\x01\0\0\0\0\0\x20\0"));
    snprintf(want, sizeof want, "t.npy: row 2: integer 9007199254740993 is too large for a "
             "double to hold exactly (its magnitude is above 2^53 = 9007199254740992); %s",
             advice);
    expect_refused("<i8 2^53 + 1", n, want);
    n = npy(">i8", "False", "(1, 2)", BYTES("\0\x20\0\0\0\0\0\x01" "\0\0\0\0\0\0\0\0"));
    snprintf(want, sizeof want, "t.npy: row 1: integer 9007199254740993 is too large for a "
             "double to hold exactly (its magnitude is above 2^53 = 9007199254740992); %s",
             advice);
    expect_refused(">i8 2^53 + 1", n, want);
    /* -(2^53 + 1) = 0xffdfffffffffffff */
    n = npy("<i8", "False", "(1,)", BYTES("\xff\xff\xff\xff\xff\xff\xdf\xff"));
    snprintf(want, sizeof want, "t.npy: row 1: integer -9007199254740993 is too large for a "
             "double to hold exactly (its magnitude is above 2^53 = 9007199254740992); %s",
             advice);
    expect_refused("<i8 -(2^53 + 1)", n, want);
    /* the most negative int64, 0x8000000000000000 = -2^63, whose magnitude
     * is no int64 */
    n = npy("<i8", "False", "(1,)", BYTES("\0\0\0\0\0\0\0\x80"));
    snprintf(want, sizeof want, "t.npy: row 1: integer -9223372036854775808 is too large for a "
             "double to hold exactly (its magnitude is above 2^53 = 9007199254740992); %s",
             advice);
    expect_refused("<i8 -2^63", n, want);
    /* the largest uint64, 2^64 - 1, in a Fortran 2 x 2: element 3 in the
     * file is row 1, column 2 */
    n = npy("<u8", "True", "(2, 2)",
            BYTES("\0\0\0\0\0\0\0\0" "\0\0\0\0\0\0\0\0" "\xff\xff\xff\xff\xff\xff\xff\xff"
                  "\0\0\0\0\0\0\0\0"));
    snprintf(want, sizeof want, "t.npy: row 1: integer 18446744073709551615 is too large for a "
             "double to hold exactly (its magnitude is above 2^53 = 9007199254740992); %s",
             advice);
    expect_refused("<u8 2^64 - 1, Fortran", n, want);
}

static void test_fortran(void)
{
    /* The six values 1..6 as the file holds them.  In C order they fill the
     * rows: [1 2; 3 4; 5 6].  In Fortran order they fill the columns of the
     * 3 x 2 matrix: [1 4; 2 5; 3 6]. */
    const double c_order[] = {1, 2, 3, 4, 5, 6}, f_order[] = {1, 4, 2, 5, 3, 6};
    const char f8[] = "\0\0\0\0\0\0\xf0\x3f" "\0\0\0\0\0\0\x00\x40" "\0\0\0\0\0\0\x08\x40"
                      "\0\0\0\0\0\0\x10\x40" "\0\0\0\0\0\0\x14\x40" "\0\0\0\0\0\0\x18\x40";
    size_t n = npy("<f8", "False", "(3, 2)", f8, sizeof f8 - 1);
    expect_matrix("<f8 3 x 2 in C order", n, 3, 2, c_order);
    n = npy("<f8", "True", "(3, 2)", f8, sizeof f8 - 1);
    expect_matrix("<f8 3 x 2 in Fortran order", n, 3, 2, f_order);
    /* float32 big-endian, Fortran, 2 x 3: 1..6 are 0x3f800000, 0x40000000,
     * 0x40400000, 0x40800000, 0x40a00000, 0x40c00000; the columns are
     * (1, 2), (3, 4), (5, 6) */
    n = npy(">f4", "True", "(2, 3)",
            BYTES("\x3f\x80\0\0" "\x40\0\0\0" "\x40\x40\0\0" "\x40\x80\0\0" "\x40\xa0\0\0"
                  "\x40\xc0\0\0"));
    expect_matrix(">f4 2 x 3 in Fortran order", n, 2, 3, (const double[]){1, 3, 5, 2, 4, 6});
    /* int64 Fortran: the pandas case of an integer frame's .values */
    n = npy("<i8", "True", "(2, 2)",
            BYTES("\x01\0\0\0\0\0\0\0" "\x02\0\0\0\0\0\0\0" "\x03\0\0\0\0\0\0\0"
                  "\xfc\xff\xff\xff\xff\xff\xff\xff"));
    expect_matrix("<i8 2 x 2 in Fortran order", n, 2, 2, (const double[]){1, 3, 2, -4});
    /* a 1-D array has one order: fortran_order changes nothing */
    n = npy("|u1", "True", "(3,)", BYTES("\x07\x08\x09"));
    expect_matrix("1-D with fortran_order True", n, 3, 1, (const double[]){7, 8, 9});
    /* a NaN in Fortran order is named by its row: the file's element 5 is
     * row 2 (of 3), column 2 */
    n = npy("<f4", "True", "(3, 2)",
            BYTES("\0\0\0\0" "\0\0\0\0" "\0\0\0\0" "\0\0\0\0" "\0\0\xc0\x7f" "\0\0\0\0"));
    expect_refused("<f4 Fortran NaN", n, "t.npy: row 2: non-finite value");
}

static void test_refused_dtypes(void)
{
    size_t n = npy("|O", "False", "(2,)", BYTES("\x80\x02]q\0(K\x01K\x02" "e."));
    expect_refused("object", n, "t.npy: unsupported dtype '|O' (an object array: pickled Python "
                   "objects, which gpc does not unpickle); save arr.astype('<f8')");
    n = npy("<c16", "False", "(1,)", BYTES("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"));
    expect_refused("complex", n, "t.npy: unsupported dtype '<c16' (complex numbers); save "
                   "arr.real.astype('<f8'), or the real and imaginary parts as two columns");
    n = npy("<U2", "False", "(1,)", BYTES("1\0\0\0" "2\0\0\0"));
    expect_refused("strings as a matrix", n, "t.npy: unsupported dtype '<U2' (strings; a matrix "
                   "holds numbers); save arr.astype('<f8') if the strings are numbers");
    n = npy("|S2", "False", "(1,)", BYTES("12"));
    expect_refused("bytes as a matrix", n, "t.npy: unsupported dtype '|S2' (strings; a matrix "
                   "holds numbers); save arr.astype('<f8') if the strings are numbers");
    n = npy("<M8[ns]", "False", "(1,)", BYTES("\0\0\0\0\0\0\0\0"));
    expect_refused("datetime", n, "t.npy: unsupported dtype '<M8[ns]' (dates or times); save "
                   "arr.astype('<f8')");
    n = npy("<f16", "False", "(1,)", BYTES("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"));
    expect_refused("long double", n, "t.npy: unsupported dtype '<f16' (floats of a size other "
                   "than 2, 4 or 8 bytes); save arr.astype('<f8')");
    n = npy("<i3", "False", "(1,)", BYTES("\0\0\0"));
    expect_refused("3-byte integers", n, "t.npy: unsupported dtype '<i3' (not a type gpc "
                   "reads); save arr.astype('<f8')");
    n = npy("=f8", "False", "(1,)", BYTES("\0\0\0\0\0\0\0\0"));
    expect_refused("native order", n, "t.npy: unsupported dtype '=f8' (byte order '='; a .npy "
                   "file says '<' or '>'); save arr.astype('<f8')");
    n = npy("|i2", "False", "(1,)", BYTES("\0\0"));
    expect_refused("no order on i2", n, "t.npy: unsupported dtype '|i2' (byte order '|'; a .npy "
                   "file says '<' or '>'); save arr.astype('<f8')");
    /* a structured dtype is a list, not a string */
    static const char rec[] = "\x93NUMPY\x01\x00\x43\x00{'descr': [('a', '<f8')], "
                              "'fortran_order': False, 'shape': (1,), }\n";
    memcpy(img, rec, sizeof rec - 1);
    expect_refused("structured", sizeof rec - 1 + 8,
                   "t.npy: unsupported dtype: a structured array (named fields); save the "
                   "fields as one plain array, np.column_stack([a[f] for f in "
                   "a.dtype.names]).astype('<f8')");
}

static void test_sizes(void)
{
    /* sizes are in elements of the dtype: 12 bytes hold three f4 */
    size_t n = npy("<f4", "False", "(2, 2)", BYTES("\0\0\0\0\0\0\0\0\0\0\0\0"));
    expect_refused("<f4 truncated", n, "t.npy: truncated .npy: expected 4 values, found 3");
    n = npy("<i2", "True", "(3,)", BYTES("\0\0\0\0\0"));
    expect_refused("<i2 truncated mid-value", n,
                   "t.npy: truncated .npy: expected 3 values, found 2");
    /* 2^62 x 4 float32 is 2^66 bytes: the product overflows size_t */
    n = npy("<f4", "False", "(4611686018427387904, 4)", BYTES("\0\0\0\0"));
    expect_refused("shape x itemsize overflows", n, "t.npy: .npy shape too large");
    /* 10^8 x 10^3 float64 (8e11 bytes) fits size_t: refused as truncated
     * before anything is allocated for it */
    n = npy("<f8", "True", "(100000000, 1000)", BYTES("\0\0\0\0\0\0\0\0"));
    expect_refused("huge shape, little data", n,
                   "t.npy: truncated .npy: expected 100000000000 values, found 1");
    /* bytes after the data are ignored, as numpy does */
    n = npy("|u1", "False", "(2,)", BYTES("\x05\x06\x07"));
    expect_matrix("trailing byte ignored", n, 2, 1, (const double[]){5, 6});
}

/* ---- labels ------------------------------------------------------------------- */

typedef struct {
    char text[8][64];
    size_t n;
} label_list;

static void take(void *ctx, const char *s, size_t len)
{
    label_list *l = ctx;
    if (l->n < 8 && len < sizeof l->text[0] && strlen(s) == len)
        memcpy(l->text[l->n++], s, len + 1);
}

/* The image reads as labels: n of them, '|'-joined equal to want. */
static void expect_labels(const char *what, size_t len, const char *want)
{
    label_list l = {.n = 0};
    int st = gpc_npy_read_labels(img, len, "y.npy", take, &l);
    char got[512] = "";
    for (size_t i = 0; i < l.n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "|" : "", l.text[i]);
    TEST_OK(st == GPC_OK && strcmp(got, want) == 0, "%s: labels '%s' (want '%s'; %s)", what, got,
            want, st ? gpc_errmsg() : "ok");
}

static void expect_labels_refused(const char *what, size_t len, const char *want)
{
    label_list l = {.n = 0};
    int st = gpc_npy_read_labels(img, len, "y.npy", take, &l);
    const char *msg = st == GPC_OK ? "(read)" : gpc_errmsg();
    if (!TEST_OK(st == GPC_EINPUT && strcmp(msg, want) == 0, "%s: refused", what))
        printf("#   got:  %s\n#   want: %s\n", msg, want);
}

static void test_labels_numbers(void)
{
    size_t n = npy("<i8", "False", "(4,)",
                   BYTES("\x03\0\0\0\0\0\0\0" "\x01\0\0\0\0\0\0\0" "\xff\xff\xff\xff\xff\xff\xff"
                         "\xff" "\x0a\0\0\0\0\0\0\0"));
    expect_labels("<i8 labels", n, "3|1|-1|10");
    n = npy(">i4", "False", "(2, 1)", BYTES("\0\0\0\x02" "\xff\xff\xff\xfe"));
    expect_labels(">i4 one column", n, "2|-2");
    n = npy("|b1", "False", "(3,)", BYTES("\x01\x00\x01"));
    expect_labels("|b1 labels", n, "1|0|1");
    /* 0.5 = f4 0x3f000000 */
    n = npy("<f4", "True", "(2, 1)", BYTES("\0\0\0\x3f" "\0\0\x80\xbf"));
    expect_labels("<f4 Fortran column", n, "0.5|-1");
    n = npy("<i8", "False", "(2,)", BYTES("\0\0\0\0\0\0\0\0" "\x01\0\0\0\0\0\x20\0"));
    expect_labels_refused("<i8 label 2^53 + 1", n,
                          "y.npy: case 2: integer 9007199254740993 is too large for a double to "
                          "hold exactly (its magnitude is above 2^53 = 9007199254740992); save "
                          "the labels as strings, y.astype(str)");
    n = npy("<f8", "False", "(1,)", BYTES("\0\0\0\0\0\0\xf8\x7f"));
    expect_labels_refused("NaN label", n, "y.npy: case 1: non-finite value");
    n = npy("<i2", "False", "(2, 2)", BYTES("\0\0\0\0\0\0\0\0"));
    expect_labels_refused("two columns", n, "y.npy: labels must be one column, found 2");
    n = npy("|O", "False", "(2,)", BYTES("\x80\x02]q\0(X\x01\0\0\0aX\x01\0\0\0be."));
    expect_labels_refused("object labels", n,
                          "y.npy: unsupported dtype '|O' (an object array: pickled Python "
                          "objects, which gpc does not unpickle); save y.astype(str) for words "
                          "or y.astype('<i8') for integers");
    n = npy("<i2", "False", "(3,)", BYTES("\0\0\0\0"));
    expect_labels_refused("truncated labels", n,
                          "y.npy: truncated .npy: expected 3 values, found 2");
}

static void test_labels_strings(void)
{
    /* '<U6': six UTF-32LE characters, NUL-padded: "setosa", "b" */
    size_t n = npy("<U6", "False", "(2,)",
                   BYTES("s\0\0\0e\0\0\0t\0\0\0o\0\0\0s\0\0\0a\0\0\0"
                         "b\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"));
    expect_labels("<U6", n, "setosa|b");
    /* U+00E9 e acute is UTF-8 c3 a9; U+20AC euro sign e2 82 ac; U+1D538
     * double-struck A f0 9d 94 b8; big-endian UTF-32 */
    n = npy(">U2", "False", "(3, 1)",
            BYTES("\0\0\0\x63\0\0\0\xe9" "\0\0\x20\xac\0\0\0\0" "\0\x01\xd5\x38\0\0\0\x31"));
    expect_labels(">U2 beyond ASCII", n, "c\xc3\xa9|\xe2\x82\xac|\xf0\x9d\x94\xb8" "1");
    /* numbers as strings stay labels that are numbers, as in a text file */
    n = npy("<U2", "True", "(2,)", BYTES("1\0\0\0" "0\0\0\0" "-\0\0\0" "1\0\0\0"));
    expect_labels("<U2 digits", n, "10|-1");
    n = npy("|S3", "False", "(2,)", BYTES("no\0yes"));
    expect_labels("|S3 bytes", n, "no|yes");

    n = npy("<U2", "False", "(3,)", BYTES("a\0\0\0\0\0\0\0" "\0\0\0\0\0\0\0\0" "b\0\0\0\0\0\0\0"));
    expect_labels_refused("empty string", n, "y.npy: case 2: an empty label: every case needs "
                          "its label");
    n = npy("<U3", "False", "(1,)", BYTES("a\0\0\0 \0\0\0b\0\0\0"));
    expect_labels_refused("blank inside", n, "y.npy: case 1: label 'a b' has a blank; a label is "
                          "one word: save np.char.replace(y, ' ', '_')");
    n = npy("<U2", "False", "(1,)", BYTES("a\0\0\0\t\0\0\0"));
    expect_labels_refused("tab", n, "y.npy: case 1: label has a control character (byte 0x09 "
                          "at byte 2); a label is one word of printable characters");
    /* a NUL before the end is no padding */
    n = npy("<U3", "False", "(1,)", BYTES("a\0\0\0\0\0\0\0b\0\0\0"));
    expect_labels_refused("inner NUL", n, "y.npy: case 1: label has a control character (byte "
                          "0x00 at byte 2); a label is one word of printable characters");
    /* 0xd800 is a surrogate, 0x110000 beyond Unicode */
    n = npy("<U1", "False", "(2,)", BYTES("x\0\0\0" "\0\xd8\0\0"));
    expect_labels_refused("surrogate", n, "y.npy: case 2: character 1 (0xd800) is not a Unicode "
                          "character; save the labels with y.astype(str)");
    n = npy("<U1", "False", "(1,)", BYTES("\0\0\x11\0"));
    expect_labels_refused("beyond U+10FFFF", n, "y.npy: case 1: character 1 (0x110000) is not a "
                          "Unicode character; save the labels with y.astype(str)");
    n = npy("<U0", "False", "(1,)", BYTES(""));
    expect_labels_refused("<U0", n, "y.npy: unsupported dtype '<U0' (strings of no characters, "
                          "or too long to hold); save y.astype(str)");
    /* 2^60 cases of 4000 bytes overflow size_t */
    n = npy("<U1000", "False", "(1152921504606846976,)", BYTES("a\0\0\0"));
    expect_labels_refused("<U shape overflow", n, "y.npy: .npy shape too large");
    n = npy("<U2", "False", "(2,)", BYTES("a\0\0\0\0\0\0\0b\0\0\0"));
    expect_labels_refused("<U truncated", n, "y.npy: truncated .npy: expected 2 values, found 1");
}

/* Through labels.c: the classes of string and integer .npy labels. */
static char dir[] = "/tmp/gpc_test_npy_XXXXXX";

static const char *put_image(const char *name, size_t len)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(img, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(99);
    }
    return path;
}

static void test_labels_module(void)
{
    /* species, as df['species'].to_numpy(dtype=str) saves them: '<U10' */
    size_t n = npy("<U10", "False", "(3,)",
                   BYTES("v\0\0\0i\0\0\0r\0\0\0g\0\0\0i\0\0\0n\0\0\0i\0\0\0c\0\0\0a\0\0\0\0\0\0\0"
                         "s\0\0\0e\0\0\0t\0\0\0o\0\0\0s\0\0\0a\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
                         "\0\0\0\0"
                         "v\0\0\0e\0\0\0r\0\0\0s\0\0\0i\0\0\0c\0\0\0o\0\0\0l\0\0\0o\0\0\0r\0\0\0"));
    gpc_labels *l = NULL;
    int st = gpc_labels_read(put_image("s.npy", n), &l);
    if (TEST_OK(st == GPC_OK, "gpc_labels_read of '<U10' species (%s)", st ? gpc_errmsg() : "ok")) {
        TEST_OK(!l->numeric && l->nclasses == 3 && !strcmp(l->names[0], "setosa") &&
                    !strcmp(l->names[1], "versicolor") && !strcmp(l->names[2], "virginica") &&
                    l->cls[0] == 2 && l->cls[1] == 0 && l->cls[2] == 1,
                "species are the words setosa versicolor virginica, case by case");
        gpc_labels_free(l);
    }
    /* int64 labels 1 and 0: a binary problem whose positive class is 1 */
    n = npy("<i8", "False", "(3,)",
            BYTES("\x01\0\0\0\0\0\0\0" "\0\0\0\0\0\0\0\0" "\x01\0\0\0\0\0\0\0"));
    st = gpc_labels_read(put_image("i.npy", n), &l);
    if (TEST_OK(st == GPC_OK, "gpc_labels_read of '<i8' (%s)", st ? gpc_errmsg() : "ok")) {
        TEST_OK(l->numeric && l->nclasses == 2 && !strcmp(l->names[0], "0") &&
                    !strcmp(l->names[1], "1") && l->cls[0] == 1 && l->cls[1] == 0,
                "int64 labels are the numbers 0 and 1");
        gpc_labels_free(l);
    }
    n = npy("<U1", "False", "(2,)", BYTES("a\0\0\0\0\0\0\0"));
    st = gpc_labels_read(put_image("e.npy", n), &l);
    TEST_OK(st == GPC_EINPUT && strstr(gpc_errmsg(), "e.npy: case 2: an empty label"),
            "an empty label through labels.c names the file and case (%s)", gpc_errmsg());
    const char *files[] = {"s.npy", "i.npy", "e.npy"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 99;
    }
    gpc_gsl_quiet();
    test_floats();
    test_integers();
    test_inexact_integers();
    test_fortran();
    test_refused_dtypes();
    test_sizes();
    test_labels_numbers();
    test_labels_strings();
    test_labels_module();
    rmdir(dir);
    return tap_done();
}
