/* Fuzz the label reader: any bytes as a labels file.  A successful read has
 * at least one class, distinct class names in order, and every case in one
 * of them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "io/labels.h"
#include "tmpfile.h"

static void check(const gpc_labels *l)
{
    if (l->nclasses == 0 || l->n == 0)
        abort();
    for (size_t c = 1; c < l->nclasses; c++)
        if (gpc_labels_find(l->names, c, l->numeric, l->names[c]) >= 0)
            abort(); /* a class named twice */
    for (size_t i = 0; i < l->n; i++)
        if (l->cls[i] >= l->nclasses)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gpc_labels *l;
    gpc_fail(GPC_OK, "%s", ""); /* so that a failure without a message shows */
    if (gpc_labels_read_present(fuzz_write(data, size), &l) == GPC_OK) {
        check(l);
        gpc_labels_free(l);
    } else if (gpc_errmsg()[0] == '\0') {
        abort();
    }
    return 0;
}
