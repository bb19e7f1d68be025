#include "linalg/vexp.h"

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* glibc's libmvec, by the x86-64 vector function ABI's names; declared for
 * the instruction sets they take their vectors in, which clang needs to
 * pass a vector register to them */
__attribute__((target("avx2,fma"))) __m256d _ZGVdN4v_exp(__m256d x);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_exp(__m512d x);

__attribute__((target("avx2,fma"))) static size_t exp_avx2(double *x, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_pd(x + i, _ZGVdN4v_exp(_mm256_loadu_pd(x + i)));
    return i;
}

__attribute__((target("avx512f"))) static size_t exp_avx512(double *x, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm512_storeu_pd(x + i, _ZGVeN8v_exp(_mm512_loadu_pd(x + i)));
    return i;
}

enum { SCALAR, AVX2, AVX512 };

/* libgcc reads the CPU's features before main; asking is a load */
static int vector_level(void)
{
    if (__builtin_cpu_supports("avx512f"))
        return AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return AVX2;
    return SCALAR;
}
#endif

void gpc_exp_array(double *x, size_t n)
{
    size_t done = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    switch (vector_level()) {
    case AVX512: done = exp_avx512(x, n); break;
    case AVX2: done = exp_avx2(x, n); break;
    default: break;
    }
#endif
    for (size_t i = done; i < n; i++)
        x[i] = exp(x[i]);
}
