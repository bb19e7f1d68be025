#include "sparse/stream.h"

/* SplitMix64 (Steele, Lea & Flood 2014): a well-mixed 64-bit value of x. */
static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

gpc_stream_order gpc_stream_order_for(uint64_t seed, uint64_t epoch, uint64_t n)
{
    gpc_stream_order o = {n, 1, 0};
    if (n <= 1)
        return o;
    uint64_t state = splitmix64(seed ^ splitmix64(epoch));
    o.c = splitmix64(state) % n;
    /* draws until one is prime to n: about n / phi(n) of them, a handful */
    for (uint64_t i = 1;; i++) {
        uint64_t a = 1 + splitmix64(state + i) % (n - 1);
        if (gcd(a, n) == 1) {
            o.a = a;
            break;
        }
    }
    return o;
}

uint64_t gpc_stream_row(const gpc_stream_order *o, uint64_t k)
{
    /* in 128 bits: a k may pass 2^64 */
    return (uint64_t)(((unsigned __int128)o->a * k + o->c) % o->n);
}
