#include "sparse/scratch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/err.h"
#include "io/libsvm.h"
#include "io/matio.h"

const char *gpc_scratch_dir(void)
{
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

static int no_room(const char *name, const char *what)
{
    return gpc_fail(GPC_EINPUT, "%s: cannot %s a scratch file in %s: %s (set TMPDIR to a "
                    "directory with room for 8 bytes a number)", name, what, gpc_scratch_dir(),
                    strerror(errno ? errno : EIO));
}

/* A file no one else can reach: made, then removed at once (the open
 * descriptor keeps it until it is closed).  -1, message set, if it cannot
 * be made. */
static int scratch_file(const char *name)
{
    const char *dir = gpc_scratch_dir();
    size_t len = strlen(dir) + sizeof "/gpc-scratch-XXXXXX";
    char *path = gpc_malloc(len);
    snprintf(path, len, "%s/gpc-scratch-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    else
        no_room(name, "make");
    free(path);
    return fd;
}

/* Bytes on their way to a scratch file, written a buffer at a time rather
 * than a system call a number. */
typedef struct {
    int fd;
    const char *name;
    size_t n;
    char buf[1 << 16];
} sink;

static int sink_flush(sink *s)
{
    for (size_t done = 0; done < s->n;) {
        ssize_t w = write(s->fd, s->buf + done, s->n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return no_room(s->name, "write");
        done += (size_t)w;
    }
    s->n = 0;
    return GPC_OK;
}

static int sink_put(sink *s, const void *p, size_t len)
{
    const char *c = p;
    while (len > 0) {
        if (s->n == sizeof s->buf && sink_flush(s) != GPC_OK)
            return GPC_EINPUT;
        size_t k = len < sizeof s->buf - s->n ? len : sizeof s->buf - s->n;
        memcpy(s->buf + s->n, c, k);
        s->n += k;
        c += k;
        len -= k;
    }
    return GPC_OK;
}

/* Each line goes to a function of this kind, which returns GPC_OK to go
 * on, an error, or LINES_DONE to stop reading. */
typedef int line_fn(void *ctx, const char *p, const char *eol, size_t lineno);
enum { LINES_DONE = 100 };

/* What getline gave, [b, b + len), as the lines the whole-file readers see:
 * a lone CR (the line end of old Mac files) ends a line as a newline does,
 * and a CR before the newline stays, read as a blank.  *lineno is the
 * number of the first, and after it that of the next. */
static int split_lines(line_fn *fn, void *ctx, const char *b, size_t len, size_t *lineno)
{
    int nl = len > 0 && b[len - 1] == '\n';
    const char *end = b + len - nl, *p = b;
    for (const char *q = memchr(p, '\r', (size_t)(end - p)); q;
         q = memchr(p, '\r', (size_t)(end - p))) {
        if (q + 1 == end && nl) /* CRLF */
            break;
        int st = fn(ctx, p, q, (*lineno)++);
        if (st != GPC_OK)
            return st;
        p = q + 1;
    }
    /* the text after the last line end is a line when it is not empty */
    if (nl || p < end)
        return fn(ctx, p, end, (*lineno)++);
    return GPC_OK;
}

/* Every line of f to fn, until it says stop; keep, when not NULL, gets
 * each getline's bytes first (and may fail). */
static int read_lines(FILE *f, const char *name, line_fn *fn, void *ctx,
                      int (*keep)(void *ctx, const char *b, size_t len))
{
    char *line = NULL;
    size_t cap = 0, lineno = 1;
    int st = GPC_OK;
    ssize_t len;
    errno = 0;
    while (st == GPC_OK && (len = getline(&line, &cap, f)) > 0) {
        if (keep)
            st = keep(ctx, line, (size_t)len);
        if (st == GPC_OK)
            st = split_lines(fn, ctx, line, (size_t)len, &lineno);
    }
    if (st == GPC_OK && ferror(f))
        st = gpc_fail(GPC_EINPUT, "%s: read error: %s", name, strerror(errno ? errno : EIO));
    free(line);
    return st == LINES_DONE ? GPC_OK : st;
}

static sink *sink_new(const char *name)
{
    sink *s = gpc_malloc(sizeof *s);
    *s = (sink){.fd = scratch_file(name), .name = name};
    return s;
}

static void sink_free(sink *s)
{
    if (s && s->fd >= 0)
        close(s->fd);
    free(s);
}

/* The state of a text matrix's copy: its lines, the scratch file, and
 * reading standard input, a copy of what it gave while the whole-file
 * reader may yet be the one to read it (tee, see keep). */
typedef struct {
    gpc_matrix_lines *ml;
    sink *s, *tee;
    int from_stdin;
    int libsvm; /* a LIBSVM file after all (see matrix_line) */
} matrix_copy;

static int matrix_line(void *ctx, const char *p, const char *eol, size_t lineno)
{
    matrix_copy *c = ctx;
    const double *row;
    int st = gpc_matrix_lines_feed(c->ml, p, eol, lineno, &row);
    if (st == GPC_OK && row)
        st = sink_put(c->s, row, gpc_matrix_lines_cols(c->ml) * sizeof *row);
    /* the whole-file reader takes a file for LIBSVM at its first line of
     * two or more fields: after rows of a label alone (cases whose features
     * are all 0), the first such line is where one field was expected, and
     * the file is then read again whole */
    if (st != GPC_OK && (!c->from_stdin || c->tee) && gpc_matrix_lines_cols(c->ml) == 1 &&
        gpc_libsvm_is(p, (size_t)(eol - p))) {
        c->libsvm = 1;
        return LINES_DONE;
    }
    return st == GPC_OK && gpc_matrix_lines_other(c->ml) ? LINES_DONE : st;
}

/* Standard input's bytes into the tee until they cannot be the whole-file
 * reader's: its first row shows .npy, LIBSVM or text, and then only rows
 * of one number may still turn out LIBSVM's (see matrix_line). */
static int keep(void *ctx, const char *b, size_t len)
{
    matrix_copy *c = ctx;
    if (!c->tee)
        return GPC_OK;
    if (gpc_matrix_lines_rows(c->ml) > 0 && gpc_matrix_lines_cols(c->ml) != 1) {
        sink_free(c->tee);
        c->tee = NULL;
        return GPC_OK;
    }
    return sink_put(c->tee, b, len);
}

/* Standard input again from its start: the bytes read of it (in tee) and
 * the rest, in the tee's scratch file, which becomes file descriptor 0 for
 * the whole-file reader to read as it would have. */
static int stdin_again(sink *tee)
{
    int st = GPC_OK;
    char buf[1 << 14];
    for (size_t got; st == GPC_OK && (got = fread(buf, 1, sizeof buf, stdin)) > 0;)
        st = sink_put(tee, buf, got);
    if (st == GPC_OK && ferror(stdin))
        st = gpc_fail(GPC_EINPUT, "<stdin>: read error: %s", strerror(errno ? errno : EIO));
    if (st == GPC_OK)
        st = sink_flush(tee);
    if (st == GPC_OK && (lseek(tee->fd, 0, SEEK_SET) != 0 || dup2(tee->fd, 0) != 0 ||
                         fseek(stdin, 0, SEEK_SET) != 0))
        st = gpc_fail(GPC_EINPUT, "<stdin>: cannot read it again from its scratch copy: %s",
                      strerror(errno));
    clearerr(stdin);
    return st;
}

/* f (named name) through a scratch file into rows; *out NULL for .npy or
 * LIBSVM, standard input then ready to be read again. */
static int text_rows(FILE *f, const char *name, gpc_rows **out, char ***names)
{
    matrix_copy c = {.ml = gpc_matrix_lines_new(name), .s = sink_new(name),
                     .from_stdin = f == stdin};
    c.tee = c.from_stdin && c.s->fd >= 0 ? sink_new(name) : NULL;
    int st = c.s->fd < 0 || (c.tee && c.tee->fd < 0)
                 ? GPC_EINPUT
                 : read_lines(f, name, matrix_line, &c, c.tee ? keep : NULL);
    int other = gpc_matrix_lines_other(c.ml) || c.libsvm;
    if (st == GPC_OK && !other)
        st = gpc_matrix_lines_end(c.ml);
    if (st == GPC_OK && !other)
        st = sink_flush(c.s);
    if (st == GPC_OK && other && c.from_stdin)
        st = stdin_again(c.tee);
    if (st == GPC_OK && !other) {
        *out = gpc_rows_open_fd(c.s->fd, 0, gpc_matrix_lines_rows(c.ml),
                                gpc_matrix_lines_cols(c.ml), name);
        *names = gpc_matrix_lines_take_colnames(c.ml);
        c.s->fd = -1; /* the rows' now */
    }
    sink_free(c.s);
    sink_free(c.tee);
    gpc_matrix_lines_free(c.ml);
    return st;
}

int gpc_rows_open_text(const char *path, gpc_rows **out, char ***names)
{
    FILE *f;
    const char *name;
    *out = NULL;
    *names = NULL;
    int st = gpc_input_open(path, &f, &name);
    if (st != GPC_OK)
        return st;
    st = text_rows(f, name, out, names);
    gpc_input_close(f);
    return st;
}

/* ---- labels ---------------------------------------------------------------- */

typedef struct {
    gpc_labels_stream *ls;
    sink *s;
} labels_copy;

static int labels_line(void *ctx, const char *p, const char *eol, size_t lineno)
{
    labels_copy *c = ctx;
    long code;
    int st = gpc_labels_stream_feed(c->ls, p, eol, lineno, &code);
    if (st == GPC_OK && code >= 0) {
        double x = (double)code;
        st = sink_put(c->s, &x, sizeof x);
    }
    return st;
}

void gpc_rows_open_labels(const char *path, gpc_rows **out, gpc_labels_summary *sum)
{
    *out = NULL;
    *sum = (gpc_labels_summary){.labels = NULL};
    FILE *f = !path || strcmp(path, "-") == 0 ? NULL : fopen(path, "rb");
    if (!f)
        return;
    gpc_labels_stream *ls = gpc_labels_stream_new(path);
    sink *s = sink_new(path);
    labels_copy c = {ls, s};
    int st = s->fd < 0 ? GPC_EINPUT : read_lines(f, path, labels_line, &c, NULL);
    if (st == GPC_OK)
        st = sink_flush(s);
    if (st == GPC_OK)
        st = gpc_labels_stream_end(ls, sum);
    if (st == GPC_OK) {
        *out = gpc_rows_open_fd(s->fd, sum->drop_first ? sizeof(double) : 0, sum->labels->n, 1,
                                path);
        s->fd = -1; /* the rows' now */
    }
    sink_free(s);
    gpc_labels_stream_free(ls);
    fclose(f);
}
