/* Fuzz the HMC chain-file reader with any bytes as a chain file. */
#include <stdint.h>
#include <stdlib.h>

#include "base/err.h"
#include "sampling/chain.h"
#include "tmpfile.h"

/* Once as --summary reads (dimension unknown), once as -x and gpc-predict
 * --chain read (the dimension of the data, 7 as in the Pima seeds). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write(data, size);
    for (size_t dim = 0; dim <= 7; dim += 7) {
        gpc_chain *c;
        gpc_fail(GPC_OK, "%s", ""); /* so that a failure without a message shows */
        if (gpc_chain_read(path, dim, &c) == GPC_OK)
            gpc_chain_free(c);
        else if (gpc_errmsg()[0] == '\0')
            abort();
    }
    return 0;
}
