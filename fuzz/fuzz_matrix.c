/* Fuzz the matrix reader: any bytes as a text or .npy matrix from a stream.
 * A read either fails with a message or gives a matrix with a source line per
 * row; both are checked, so silent garbage is a finding too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "io/matio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* fmemopen needs a non-empty buffer it may write to; an empty input is
     * the same as /dev/null. */
    char empty = 0;
    FILE *f = size ? fmemopen((void *)data, size, "rb") : fmemopen(&empty, 1, "rb");
    if (!f)
        return 0;
    if (!size)
        fgetc(f); /* leave the one-byte buffer at its end */
    gsl_matrix *m;
    gpc_source src;
    gpc_fail(GPC_OK, "%s", ""); /* so that a failure without a message shows */
    int st = gpc_matrix_read_stream(f, "fuzz", &m, &src);
    fclose(f);
    if (st == GPC_OK) {
        if (!m || m->size1 == 0 || m->size2 == 0 || src.rows != m->size1)
            abort();
        for (size_t i = 0; i < m->size1 * m->size2; i++)
            if (m->data[i] != m->data[i] || m->data[i] - m->data[i] != 0)
                abort(); /* NaN or Inf got through */
        gsl_matrix_free(m);
        gpc_source_free(&src);
    } else if (gpc_errmsg()[0] == '\0') {
        abort(); /* an error without a message */
    }
    return 0;
}
