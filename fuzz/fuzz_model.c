/* Fuzz the model-file reader with any bytes as a model file. */
#include <stdint.h>
#include <stdlib.h>

#include "base/err.h"
#include "methods/model.h"
#include "tmpfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gpc_model *m;
    gpc_fail(GPC_OK, "%s", ""); /* so that a failure without a message shows */
    if (gpc_model_read(fuzz_write(data, size), &m) == GPC_OK)
        gpc_model_free(m);
    else if (gpc_errmsg()[0] == '\0')
        abort(); /* an error without a message */
    return 0;
}
