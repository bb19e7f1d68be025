/* hash — FNV-1a (Fowler, Noll & Vo) over the bytes of numbers: the data
 * checks of chains and checkpoints, which compare a file's numbers with
 * those a run was started on. */
#ifndef GPC_HASH_H
#define GPC_HASH_H

#include <stddef.h>

#define GPC_HASH_START 14695981039346656037ull

/* h continued over the bytes of v[0..n), in memory order. */
static inline unsigned long long gpc_hash_doubles(unsigned long long h, const double *v,
                                                  size_t n)
{
    const unsigned char *b = (const unsigned char *)v;
    for (size_t k = 0; k < n * sizeof *v; k++)
        h = (h ^ b[k]) * 1099511628211ull;
    return h;
}

#endif
