/* The shares of a batch among processes, the same in every build. */
#include "base/comm.h"

gpc_comm_share gpc_comm_share_of(size_t n, int r, int R)
{
    size_t lo = (size_t)((unsigned __int128)n * (unsigned)r / (unsigned)R),
           hi = (size_t)((unsigned __int128)n * (unsigned)(r + 1) / (unsigned)R);
    gpc_comm_share s = {lo, hi - lo};
    return s;
}
