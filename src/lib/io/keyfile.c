#include "io/keyfile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

/* Next line that is neither blank nor a comment, without its newline (cut
 * in place); NULL at the end. */
char *gpc_keyfile_line(gpc_keyfile *r)
{
    while (r->pos < r->end) {
        char *s = r->pos, *nl = memchr(s, '\n', (size_t)(r->end - s));
        if (nl) {
            *nl = '\0';
            r->pos = nl + 1;
        } else {
            r->pos = r->end;
        }
        r->line++;
        s[strcspn(s, "\r")] = '\0';
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s && *s != '#')
            return s;
    }
    return NULL;
}

/* Bytes not yet read: every number still to come takes at least two of them
 * (a digit and a separator), which bounds what a stated count can be. */
size_t gpc_keyfile_left(const gpc_keyfile *r) { return (size_t)(r->end - r->pos); }

/* Read "key value" where value is the rest of the line. */
int gpc_keyfile_expect(gpc_keyfile *r, const char *key, char **value)
{
    char *s = gpc_keyfile_line(r);
    size_t kl = strlen(key);
    if (!s)
        return gpc_fail(GPC_EINPUT, "%s:%zu: %s ends early, expected '%s'", r->name,
                        r->line, r->what, key);
    if (strncmp(s, key, kl) != 0 || (s[kl] != ' ' && s[kl] != '\t'))
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected '%s ...' in a gpc %s", r->name,
                        r->line, key, r->what);
    s += kl;
    while (*s == ' ' || *s == '\t')
        s++;
    *value = s;
    return GPC_OK;
}

/* Whether the next line that is neither blank nor a comment is "key ...";
 * reads nothing, so that an optional key can be skipped. */
int gpc_keyfile_next_is(const gpc_keyfile *r, const char *key)
{
    size_t kl = strlen(key);
    for (const char *s = r->pos; s < r->end;) {
        const char *nl = memchr(s, '\n', (size_t)(r->end - s));
        const char *eol = nl ? nl : r->end;
        while (s < eol && (*s == ' ' || *s == '\t'))
            s++;
        if (s < eol && *s != '#' && *s != '\r')
            return (size_t)(eol - s) > kl && strncmp(s, key, kl) == 0 &&
                   (s[kl] == ' ' || s[kl] == '\t');
        s = eol + 1;
    }
    return 0;
}

int gpc_keyfile_number(gpc_keyfile *r, const char *s, double *x, char **end)
{
    char *e;
    errno = 0;
    *x = strtod(s, &e);
    if (e == s || !isfinite(*x))
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected a finite number at '%.20s'", r->name,
                        r->line, s);
    if (end)
        *end = e;
    else if (e[strspn(e, " \t")] != '\0')
        return gpc_fail(GPC_EINPUT, "%s:%zu: unexpected text '%.20s'", r->name, r->line, e);
    return GPC_OK;
}

int gpc_keyfile_count(gpc_keyfile *r, const char *key, size_t *out)
{
    char *v;
    double x = 0.0;
    int st = gpc_keyfile_expect(r, key, &v);
    if (st == GPC_OK)
        st = gpc_keyfile_number(r, v, &x, NULL);
    if (st == GPC_OK && (x < 0 || x != floor(x) || x > 1e9))
        st = gpc_fail(GPC_EINPUT, "%s:%zu: '%s' needs a count", r->name, r->line, key);
    /* converted only once in range: an out-of-range conversion is undefined */
    *out = st == GPC_OK ? (size_t)x : 0;
    return st;
}

/* The number of blank-separated tokens in s. */
size_t gpc_keyfile_tokens(const char *s)
{
    size_t k = 0;
    for (;;) {
        s += strspn(s, " \t");
        if (*s == '\0')
            return k;
        k++;
        s += strcspn(s, " \t");
    }
}

