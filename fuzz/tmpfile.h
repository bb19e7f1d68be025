/* The label, model and chain readers take a path, so their harnesses write each
 * input to one temporary file, made once per process and removed at exit. */
#ifndef FUZZ_TMPFILE_H
#define FUZZ_TMPFILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_path[64];

static void fuzz_path_remove(void) { unlink(fuzz_path); }

/* The input as the contents of the temporary file; its path. */
static const char *fuzz_write(const uint8_t *data, size_t size)
{
    if (!fuzz_path[0]) {
        snprintf(fuzz_path, sizeof fuzz_path, "/tmp/gpc-fuzz-XXXXXX");
        int fd = mkstemp(fuzz_path);
        if (fd < 0)
            abort();
        close(fd);
        atexit(fuzz_path_remove);
    }
    FILE *f = fopen(fuzz_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    return fuzz_path;
}

#endif
