/* Fuzz the hyperparameter-file reader (-H, --params-file): the first byte
 * picks a kernel, the rest is the file.  A read that succeeds leaves every
 * hyperparameter finite; one that fails has a message naming the file and
 * leaves the kernel as it was. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "cli/cli.h"
#include "kernels/kernel.h"
#include "tmpfile.h"

static const struct {
    const char *spec;
    size_t dim;
} KERNELS[] = {
    {"ard+bias", 3},
    {"se+linear+jitter", 2},
    {"ard@1-2,4+nn@3:discrete=4", 4},
    {"ard+bias:per-class=3", 2},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t pick = data[0] % (sizeof KERNELS / sizeof KERNELS[0]);
    gpc_kernel *k;
    if (gpc_kernel_parse(KERNELS[pick].spec, KERNELS[pick].dim, &k) != GPC_OK)
        abort();
    size_t p = gpc_kernel_nparams(k);
    double *before = malloc(p * sizeof *before);
    memcpy(before, gpc_kernel_params(k), p * sizeof *before);
    const char *path = fuzz_write(data + 1, size - 1);
    gpc_fail(GPC_OK, "%s", ""); /* so that a failure without a message shows */
    if (gpc_cli_params_file_read(k, path) == GPC_OK) {
        for (size_t j = 0; j < p; j++)
            if (!(gpc_kernel_params(k)[j] - gpc_kernel_params(k)[j] == 0))
                abort(); /* NaN or Inf got through */
    } else if (strncmp(gpc_errmsg(), path, strlen(path)) != 0 ||
               memcmp(before, gpc_kernel_params(k), p * sizeof *before) != 0) {
        abort(); /* a message without the file, or a kernel half set */
    }
    free(before);
    gpc_kernel_free(k);
    return 0;
}
