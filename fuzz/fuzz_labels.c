/* Fuzz the binary label reader: any bytes as a label file from a stream.  A
 * successful read holds only -1 and +1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "matio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char empty = 0;
    FILE *f = size ? fmemopen((void *)data, size, "rb") : fmemopen(&empty, 1, "rb");
    if (!f)
        return 0;
    if (!size)
        fgetc(f);
    gsl_vector *y;
    gpc_fail(GPC_OK, "%s", ""); /* so that a failure without a message shows */
    int st = gpc_labels_read_binary_stream(f, "fuzz", &y);
    fclose(f);
    if (st == GPC_OK) {
        for (size_t i = 0; i < y->size; i++)
            if (gsl_vector_get(y, i) != 1.0 && gsl_vector_get(y, i) != -1.0)
                abort();
        gsl_vector_free(y);
    } else if (gpc_errmsg()[0] == '\0') {
        abort();
    }
    return 0;
}
