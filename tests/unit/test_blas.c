/* The BLAS kernels (blas.h): where OpenBLAS fell back to Prescott on a CPU
 * whose features call for better kernels, gpc_blas_init switches to them,
 * and after the switch products and factorisations are still right, on one
 * thread and on two. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>

#include "linalg/blas.h"
#include "tap.h"

void openblas_set_num_threads(int n);

static void test_choice(void)
{
    const char *detected = gpc_blas_detected_core(), *core = gpc_blas_core();
    const char *want = gpc_blas_core_for_cpu();
    if (getenv("OPENBLAS_CORETYPE") || strcasecmp(detected, "Prescott") != 0 || !want)
        TEST_OK(strcmp(core, detected) == 0, "kernels kept: %s", core);
    else
        TEST_OK(strcasecmp(core, want) == 0, "OpenBLAS chose %s; the CPU calls for %s; now %s",
                detected, want, core);
    gpc_blas_init(); /* a second call changes nothing */
    TEST_OK(strcmp(gpc_blas_core(), core) == 0, "gpc_blas_init is idempotent");
}

/* A = M M' + n I from a fixed pseudo-random M; C = A B against the sum. */
static void test_products(size_t n, int threads)
{
    openblas_set_num_threads(threads);
    gsl_matrix *M = gsl_matrix_alloc(n, n), *A = gsl_matrix_alloc(n, n);
    gsl_matrix *C = gsl_matrix_alloc(n, n), *L = gsl_matrix_alloc(n, n);
    unsigned long s = 12345;
    for (size_t i = 0; i < n * n; i++) {
        s = s * 6364136223846793005ul + 1442695040888963407ul;
        M->data[i] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    }
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, M, M, 0.0, A);
    double err = 0.0;
    for (size_t i = 0; i < n; i += 7)
        for (size_t j = 0; j < n; j += 5) {
            double sum = 0.0;
            for (size_t k = 0; k < n; k++)
                sum += gsl_matrix_get(M, i, k) * gsl_matrix_get(M, j, k);
            err = fmax(err, fabs(sum - gsl_matrix_get(A, i, j)));
        }
    TEST_OK(err < 1e-12 * (double)n, "n = %zu, %d threads: M M' against sums (%.2g)", n,
            threads, err);
    for (size_t i = 0; i < n; i++)
        *gsl_matrix_ptr(A, i, i) += (double)n;
    gsl_matrix_memcpy(L, A);
    TEST_OK(gsl_linalg_cholesky_decomp1(L) == 0, "n = %zu, %d threads: Cholesky", n, threads);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            gsl_matrix_set(L, i, j, 0.0);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, L, L, 0.0, C);
    gsl_matrix_sub(C, A);
    double rerr = fmax(gsl_matrix_max(C), -gsl_matrix_min(C));
    TEST_OK(rerr < 1e-13 * (double)n, "n = %zu, %d threads: L L' = A (%.2g)", n, threads, rerr);
    gsl_matrix_free(M);
    gsl_matrix_free(A);
    gsl_matrix_free(C);
    gsl_matrix_free(L);
}

int main(void)
{
    gpc_blas_init();
    test_choice();
    test_products(300, 1);
    test_products(900, 2); /* above OpenBLAS's own thresholds for threads */
    return tap_done();
}
