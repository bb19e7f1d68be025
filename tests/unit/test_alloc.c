/* test_alloc — sizes checked before allocating: the saturating arithmetic
 * that workspace sizes are computed with, the memory a process may take
 * (physical, or what ulimit -v leaves), and the messages of a refusal. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/err.h"
#include "tap.h"

static void test_arithmetic(void)
{
    TEST_OK(gpc_size_mul(3, 5) == 15, "3 x 5 = 15");
    TEST_OK(gpc_size_mul(SIZE_MAX / 2, 2) == SIZE_MAX - 1, "the largest even product is exact");
    TEST_OK(gpc_size_mul(SIZE_MAX / 2 + 1, 2) == SIZE_MAX, "a product past size_t saturates");
    TEST_OK(gpc_size_mul(SIZE_MAX, 1) == SIZE_MAX && gpc_size_mul(0, SIZE_MAX) == 0,
            "SIZE_MAX stays, times 0 is 0");
    TEST_OK(gpc_size_add(SIZE_MAX - 2, 1) == SIZE_MAX - 1, "a sum below SIZE_MAX is exact");
    TEST_OK(gpc_size_add(SIZE_MAX - 1, 2) == SIZE_MAX && gpc_size_add(SIZE_MAX, SIZE_MAX) ==
            SIZE_MAX, "a sum past size_t saturates");
    TEST_OK(gpc_doubles_bytes(1500, 1500) == 18000000, "1500 x 1500 doubles are 18000000 bytes");
    TEST_OK(gpc_doubles_bytes(0, 1500) == 0, "an empty matrix takes nothing");
}

/* C n x n matrices of doubles, the size of a multiclass workspace: n * n,
 * its bytes and the C copies may each be what overflows. */
static void test_workspace_overflow(void)
{
    if (SIZE_MAX >> 63 == 0) { /* the cases below are those of a 64-bit size_t */
        TEST_OK(1, "# skip: size_t is not 64 bits");
        return;
    }
    size_t n29 = (size_t)1 << 29, n31 = (size_t)1 << 31, n32 = (size_t)1 << 32;
    TEST_OK(gpc_size_mul(7, gpc_doubles_bytes(n29, n29)) == 7 * ((size_t)1 << 61),
            "7 x (2^29)^2 doubles = 7 * 2^61 bytes, exact");
    TEST_OK(gpc_size_mul(8, gpc_doubles_bytes(n29, n29)) == SIZE_MAX,
            "8 x (2^29)^2 doubles: the classes overflow");
    TEST_OK(gpc_doubles_bytes(n31, n31) == SIZE_MAX, "(2^31)^2 doubles: the bytes overflow");
    TEST_OK(gpc_size_mul(3, gpc_doubles_bytes(n32, n32)) == SIZE_MAX,
            "3 x (2^32)^2 doubles: n * n overflows (it would wrap to 0)");
    TEST_OK(gpc_size_add(gpc_size_mul(3, gpc_doubles_bytes(n32, n32)), 1000) == SIZE_MAX,
            "and stays overflowed through a sum");
    TEST_OK(gpc_alloc_check(gpc_size_mul(3, gpc_doubles_bytes(n32, n32)), "w", "h") ==
                GPC_EINPUT,
            "an overflowed size is refused");
}

static void expect_refusal(size_t bytes, gpc_memory mem, const char *want)
{
    int st = gpc_alloc_fits(bytes, mem, "the workspace", "try less");
    TEST_OK(st == GPC_EINPUT && strcmp(gpc_errmsg(), want) == 0,
            "%zu bytes in %zu (limited %d): '%s' (want '%s')", bytes, mem.bytes, mem.limited,
            st == GPC_OK ? "accepted" : gpc_errmsg(), want);
}

static void test_fits(void)
{
    gpc_memory mem = {4100000000u, 0}, lim = {1900000000u, 1};
    TEST_OK(gpc_alloc_fits(4100000000u, mem, "w", "h") == GPC_OK, "exactly the memory fits");
    TEST_OK(gpc_alloc_fits(0, (gpc_memory){0, 1}, "w", "h") == GPC_OK, "nothing always fits");
    TEST_OK(gpc_alloc_fits(4100000001u, mem, "w", "h") == GPC_EINPUT, "one byte more does not");
    expect_refusal((size_t)5120000000u, mem,
                   "the workspace would take 5.12 GB, more than this machine's 4.1 GB of "
                   "memory; try less");
    expect_refusal((size_t)5120000000u, lim,
                   "the workspace would take 5.12 GB, more than the 1.9 GB that the "
                   "address-space limit (ulimit -v) leaves; try less");
    expect_refusal(312000000, (gpc_memory){4100, 0},
                   "the workspace would take 312 MB, more than this machine's 4.1 kB of "
                   "memory; try less");
    expect_refusal(513, (gpc_memory){512, 1},
                   "the workspace would take 513 bytes, more than the 512 bytes that the "
                   "address-space limit (ulimit -v) leaves; try less");
    expect_refusal((size_t)8e13, mem,
                   "the workspace would take 80 TB, more than this machine's 4.1 GB of "
                   "memory; try less");
    expect_refusal((size_t)2.4e15, mem,
                   "the workspace would take 2400 TB, more than this machine's 4.1 GB of "
                   "memory; try less");
    expect_refusal(SIZE_MAX, (gpc_memory){SIZE_MAX, 0},
                   "the workspace would take more memory than any machine can address; "
                   "try less");
}

/* Unlimited, the bound is the machine's memory; under a lower RLIMIT_AS,
 * what the limit leaves beside the space already mapped. */
static void test_available(void)
{
    struct rlimit old;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t phys = (size_t)pages * (size_t)page;
    if (getrlimit(RLIMIT_AS, &old) != 0 || old.rlim_cur != RLIM_INFINITY) {
        TEST_OK(1, "# skip: the address space is limited already");
        return;
    }
    gpc_memory mem = gpc_memory_available();
    TEST_OK(mem.bytes == phys && !mem.limited, "unlimited: the machine's %zu bytes (got %zu)",
            phys, mem.bytes);
    /* the limit at what is mapped now plus 1 GB: about 1 GB left */
    unsigned long mapped = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%lu", &mapped) != 1) {
        TEST_OK(1, "# skip: no /proc/self/statm");
        if (f)
            fclose(f);
        return;
    }
    fclose(f);
    size_t gb = 1000000000;
    struct rlimit low = {(rlim_t)(mapped * (size_t)page + gb), old.rlim_max};
    if (phys <= gb || setrlimit(RLIMIT_AS, &low) != 0) {
        TEST_OK(1, "# skip: cannot set a limit below the machine's memory");
        return;
    }
    mem = gpc_memory_available();
    setrlimit(RLIMIT_AS, &old);
    TEST_OK(mem.limited && mem.bytes <= gb && mem.bytes > gb - 64 * 1000000,
            "under ulimit -v: what the limit leaves, about 1 GB (got %zu)", mem.bytes);
    TEST_OK(gpc_alloc_fits(2 * gb, mem, "w", "h") == GPC_EINPUT &&
                strstr(gpc_errmsg(), "(ulimit -v)") != NULL,
            "and 2 GB is refused naming the limit (%s)", gpc_errmsg());
}

int main(void)
{
    test_arithmetic();
    test_workspace_overflow();
    test_fits();
    test_available();
    return tap_done();
}
