/* Fuzz the HMC chain-file reader with any bytes as a chain file. */
#include <stdint.h>
#include <stdlib.h>

#include "chain.h"
#include "err.h"
#include "tmpfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gpc_chain *c;
    gpc_fail(GPC_OK, "%s", ""); /* so that a failure without a message shows */
    if (gpc_chain_read(fuzz_write(data, size), &c) == GPC_OK)
        gpc_chain_free(c);
    else if (gpc_errmsg()[0] == '\0')
        abort();
    return 0;
}
