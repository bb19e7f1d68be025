/* Fuzz the CSV reader with a header: any bytes as a matrix whose first line
 * names the columns (--header).  A read that succeeds must give a matrix as
 * fuzz_matrix checks it, and, when it was CSV, one distinct non-empty name
 * per column; written back as CSV under its names it must read back the
 * same, names and values, so that the writer and the reader agree. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "io/colnames.h"
#include "io/libsvm.h"
#include "io/matio.h"

/* A read of the bytes as a file named "fuzz"; 0 when it succeeded. */
static int read_bytes(const void *data, size_t size, gsl_matrix **m, gpc_source *src)
{
    /* fmemopen needs a non-empty buffer it may write to; an empty input is
     * the same as /dev/null. */
    char empty = 0;
    FILE *f = size ? fmemopen((void *)data, size, "rb") : fmemopen(&empty, 1, "rb");
    if (!f)
        abort();
    if (!size)
        fgetc(f); /* leave the one-byte buffer at its end */
    gpc_fail(GPC_OK, "%s", ""); /* so that a failure without a message shows */
    int st = gpc_matrix_read_stream(f, "fuzz", m, src);
    fclose(f);
    if (st != GPC_OK && gpc_errmsg()[0] == '\0')
        abort(); /* an error without a message */
    return st;
}

static void check_matrix(const gsl_matrix *m, const gpc_source *src)
{
    if (!m || m->size1 == 0 || m->size2 == 0 || src->rows != m->size1)
        abort();
    for (size_t i = 0; i < m->size1 * m->size2; i++)
        if (m->data[i] != m->data[i] || m->data[i] - m->data[i] != 0)
            abort(); /* NaN or Inf got through */
    if (!src->colnames)
        return;
    size_t first, second;
    if (gpc_colnames_count(src->colnames) != m->size2 ||
        gpc_colnames_repeated(src->colnames, m->size2, &first, &second))
        abort(); /* names and columns do not match, or a name twice */
    for (size_t j = 0; j < m->size2; j++)
        if (!src->colnames[j][0])
            abort();
}

/* m under its names as CSV, read back: the same names and the same bits. */
static void check_round_trip(const gsl_matrix *m, const gpc_source *src)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out || gpc_matrix_write_named(out, "out", m, GPC_FMT_TEXT, src->colnames) != GPC_OK ||
        fclose(out) != 0)
        abort();
    gsl_matrix *back;
    gpc_source again;
    if (read_bytes(text, len, &back, &again) != GPC_OK) {
        fprintf(stderr, "written:\n%.*s\nread back: %s\n", (int)(len < 2000 ? len : 2000), text,
                gpc_errmsg());
        abort(); /* the reader refuses what the writer wrote */
    }
    if (back->size1 != m->size1 || back->size2 != m->size2 ||
        memcmp(back->data, m->data, m->size1 * m->size2 * sizeof *m->data) != 0)
        abort();
    for (size_t j = 0; j < m->size2; j++)
        if (!again.colnames || strcmp(again.colnames[j], src->colnames[j]) != 0)
            abort();
    gsl_matrix_free(back);
    gpc_source_free(&again);
    free(text);
}

/* Whether the reader will take the bytes for LIBSVM, whose lines may also
 * end in a lone CR. */
static int is_libsvm(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    if (!text)
        abort();
    for (size_t i = 0; i < size; i++)
        text[i] = data[i] == '\r' ? '\n' : (char)data[i];
    int yes = gpc_libsvm_is(text, size);
    free(text);
    return yes;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* LIBSVM text is fuzz_matrix's: a few lines may rightly ask for a dense
     * matrix of 2^20 columns, past the fuzzer's allocation limit */
    if (is_libsvm(data, size))
        return 0;
    gpc_matio_set_header(GPC_HEADER_YES);
    gsl_matrix *m;
    gpc_source src;
    if (read_bytes(data, size, &m, &src) != GPC_OK)
        return 0;
    check_matrix(m, &src);
    if (src.colnames)
        check_round_trip(m, &src);
    gsl_matrix_free(m);
    gpc_source_free(&src);
    return 0;
}
