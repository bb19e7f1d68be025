/* tmpfiles — files of a unit test in a fresh directory: the test makes it
 * with mkdtemp(tmp_dir) (tmp_dir set to its own "/tmp/...-XXXXXX" first),
 * names its files by tmp_path, and writes them with tmp_put; a file that
 * cannot be written ends the test with status 99 (a broken test, not a
 * failed check). */
#ifndef GPC_TEST_TMPFILES_H
#define GPC_TEST_TMPFILES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmp_dir[64];

/* tmp_dir/name, in one of a few rotating buffers so two can be used at
 * once. */
static inline const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmp_dir, name);
    return buf[k];
}

static inline void tmp_put_bytes(const char *name, const void *data, size_t len)
{
    FILE *f = fopen(tmp_path(name), "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(tmp_path(name));
        exit(99);
    }
}

static inline void tmp_put(const char *name, const char *text)
{
    tmp_put_bytes(name, text, strlen(text));
}

#endif
