#include "linalg/blas.h"

#include <stdlib.h>
#include <strings.h>

/* Exported by OpenBLAS's DYNAMIC_ARCH builds (Debian's): the first returns
 * the kernels' name, the other two forget the choice and make it again,
 * reading OPENBLAS_CORETYPE as at load time. */
char *openblas_get_corename(void);
char *openblas_get_config(void);
/* weak: a build without DYNAMIC_ARCH has one set of kernels and lacks them */
void gotoblas_dynamic_quit(void) __attribute__((weak));
void gotoblas_dynamic_init(void) __attribute__((weak));

static const char *detected;

const char *gpc_blas_core_for_cpu(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    /* libgcc also checks that the OS saves the wider registers */
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "Haswell";
#endif
    return NULL;
}

void gpc_blas_init(void)
{
    if (detected)
        return;
    detected = openblas_get_corename();
    if (getenv("OPENBLAS_CORETYPE") || strcasecmp(detected, "Prescott") != 0)
        return; /* the user's choice, or a core OpenBLAS recognised */
    const char *core = gpc_blas_core_for_cpu();
    if (!core || !gotoblas_dynamic_quit || !gotoblas_dynamic_init)
        return;
    setenv("OPENBLAS_CORETYPE", core, 1);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    unsetenv("OPENBLAS_CORETYPE"); /* so child processes decide for themselves */
}

const char *gpc_blas_core(void) { return openblas_get_corename(); }

const char *gpc_blas_config(void) { return openblas_get_config(); }

const char *gpc_blas_detected_core(void) { return detected ? detected : gpc_blas_core(); }
