#include "io/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/err.h"

struct gpc_output {
    FILE *f;
    char *name;       /* as given, for messages; "<stdout>" for "-" */
    char *target;     /* the regular file a commit replaces; NULL when written directly */
    char *tmp;        /* the temporary beside target */
    unsigned long long dir_dev, dir_ino; /* target's directory, to tell two
                                            names of one output apart */
    int close_f;      /* f is ours to close (not stdout) */
    int durable;      /* sync the data and the rename to the device on commit */
    gpc_output *next; /* in the list of live temporaries */
};

/* Temporaries not yet committed or aborted.  The signal handler walks this
 * list, so a node is linked only once complete and unlinked before it is
 * freed. */
static gpc_output *volatile live;

static void remove_live(void)
{
    for (gpc_output *o = live; o; o = o->next)
        unlink(o->tmp);
}

static void die_of_signal(int sig)
{
    remove_live();
    gpc_cleanup(); /* the tools' own temporaries (gpc-plot's directory) */
    signal(sig, SIG_DFL);
    raise(sig);
}

void gpc_output_remove_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = die_of_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        /* a signal the shell told us to ignore (nohup, &) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

static void track(gpc_output *o)
{
    static int hooked;
    if (!hooked) {
        gpc_on_die(remove_live);
        hooked = 1;
    }
    o->next = live;
    live = o;
}

/* The temporary is the file itself from here on (published), or gone:
 * no longer removed on failure or signal. */
static void untrack(gpc_output *o)
{
    for (gpc_output *volatile *pp = &live; *pp; pp = &(*pp)->next)
        if (*pp == o) {
            *pp = o->next;
            break;
        }
    free(o->tmp);
    o->tmp = NULL;
}

static void output_free(gpc_output *o)
{
    untrack(o);
    free(o->name);
    free(o->target);
    free(o);
}

static int write_error(const char *name, int err)
{
    return gpc_fail(GPC_EINPUT, "%s: write error: %s", name, strerror(err ? err : EIO));
}

/* ---- where a path leads ---------------------------------------------------- */

/* The descriptor a /dev/stdout-like name stands for, or -1.  Reopening
 * such a name would truncate what the shell opened (think of >>), so the
 * descriptor itself is written. */
static int std_descriptor(const char *path)
{
    if (!strcmp(path, "/dev/stdout"))
        return 1;
    if (!strcmp(path, "/dev/stderr"))
        return 2;
    const char *prefixes[] = {"/dev/fd/", "/proc/self/fd/"};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(prefixes[i]);
        if (!strncmp(path, prefixes[i], n) && path[n]) {
            char *end;
            long fd = strtol(path + n, &end, 10);
            if (!*end && fd >= 0 && fd <= INT_MAX)
                return (int)fd;
        }
    }
    return -1;
}

/* The path with every symlink along its last component followed, so a
 * rename replaces the link's target and not the link.  A dangling link
 * leads to the file it names, which is then created.  Following stops at a
 * name for a descriptor (/dev/stdout -> /proc/self/fd/1 -> pipe:[...]),
 * whose descriptor is then written: *fd is it, or -1. */
static int follow_links(const char *path, char **out, int *fd)
{
    char *p = gpc_strdup(path);
    for (int hops = 0; hops < 40; hops++) {
        struct stat sb;
        *fd = std_descriptor(p);
        if (*fd >= 0 || lstat(p, &sb) != 0 || !S_ISLNK(sb.st_mode)) {
            *out = p;
            return GPC_OK;
        }
        char link[PATH_MAX];
        ssize_t len = readlink(p, link, sizeof link - 1);
        if (len < 0) {
            free(p);
            return gpc_fail(GPC_EINPUT, "%s: cannot read the link: %s", path, strerror(errno));
        }
        link[len] = '\0';
        char *slash = strrchr(p, '/');
        if (link[0] == '/' || !slash) {
            free(p);
            p = gpc_strdup(link);
        } else { /* relative to the link's own directory */
            size_t dir = (size_t)(slash - p) + 1;
            char *q = gpc_malloc(dir + (size_t)len + 1);
            memcpy(q, p, dir);
            memcpy(q + dir, link, (size_t)len + 1);
            free(p);
            p = q;
        }
    }
    free(p);
    return gpc_fail(GPC_EINPUT, "%s: too many levels of symbolic links", path);
}

/* ---- opening ------------------------------------------------------------------ */

static int open_direct(gpc_output *o, const char *path, int fd)
{
    int err;
    if (fd >= 0) {
        int copy = dup(fd);
        o->f = copy < 0 ? NULL : fdopen(copy, "wb");
        err = errno;
        if (!o->f && copy >= 0)
            close(copy);
    } else {
        o->f = fopen(path, "wb");
        err = errno;
    }
    if (!o->f)
        return gpc_fail(GPC_EINPUT, "%s: cannot open for writing: %s", path, strerror(err));
    o->close_f = 1;
    return GPC_OK;
}

/* ---- a file another run is writing ------------------------------------------ */

/* A temporary holds a write lock from its creation, and a published one
 * (a chain) keeps it for as long as it is written; gpc-hmc takes the same
 * lock on a chain it extends in place.  Returns 0 if another process holds
 * one. */
static int lock_whole(int fd)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    return fcntl(fd, F_SETLK, &fl) == 0 || (errno != EACCES && errno != EAGAIN);
}

int gpc_output_lock(int fd) { return lock_whole(fd); }

/* Whether another process holds a write lock on the regular file at path
 * (a file that cannot be opened or locked is nobody's). */
static int written_by_another(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    int held = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    close(fd);
    return held;
}

static int busy(const char *name)
{
    return gpc_fail(GPC_EINPUT, "%s: another run is writing this file; give another name, or "
                    "wait until that run is done", name);
}

/* The directory part of path, for locking it: "." for a bare name. */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return gpc_strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = gpc_malloc(n + 1);
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

/* Rename the temporary over its target unless another run is writing the
 * target.  Two runs could both find the target free and then rename one
 * after the other, so the test and the rename are made under an exclusive
 * flock of the directory, which every gpc run replacing a file there takes
 * (best effort: where a directory cannot be locked, as on some network file
 * systems, the test alone remains). */
static int replace_target(gpc_output *o)
{
    char *dir = directory_of(o->target);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    free(dir);
    if (dfd >= 0)
        (void)flock(dfd, LOCK_EX);
    int st = GPC_OK;
    if (written_by_another(o->target))
        st = busy(o->name);
    else if (rename(o->tmp, o->target) != 0)
        st = gpc_fail(GPC_EINPUT, "%s: cannot rename %s into place: %s", o->name, o->tmp,
                      strerror(errno));
    else if (o->durable && dfd >= 0 && fsync(dfd) != 0)
        st = gpc_fail(GPC_EINPUT, "%s: cannot sync its directory: %s", o->name,
                      strerror(errno));
    if (dfd >= 0)
        close(dfd); /* and the flock with it */
    return st;
}

/* ---- the temporary ------------------------------------------------------------- */

/* target's directory, then its base name cut to leave room for the suffix
 * within NAME_MAX (at a character boundary of UTF-8), then .tmpXXXXXX: a
 * name of 250 bytes can be written, and its temporary is still
 * recognisably its own. */
static char *temporary_name(const char *target)
{
    static const char suffix[] = ".tmpXXXXXX";
    const char *slash = strrchr(target, '/');
    size_t dir = slash ? (size_t)(slash - target) + 1 : 0;
    size_t base = strlen(target + dir), room = NAME_MAX - (sizeof suffix - 1);
    if (base > room) {
        base = room;
        while (base > 0 && ((unsigned char)target[dir + base] & 0xC0) == 0x80)
            base--; /* target[dir + base] continues a character: cut before it */
    }
    char *t = gpc_malloc(dir + base + sizeof suffix);
    memcpy(t, target, dir + base);
    memcpy(t + dir + base, suffix, sizeof suffix);
    return t;
}

/* Whether o and another output of this run would replace the same file:
 * the same name in the same directory, however each path spelt it.  One
 * would silently lose the other. */
static int same_as_live(const gpc_output *o)
{
    const char *base = strrchr(o->target, '/');
    base = base ? base + 1 : o->target;
    for (const gpc_output *l = live; l; l = l->next) {
        const char *b = strrchr(l->target, '/');
        if (l->dir_dev == o->dir_dev && l->dir_ino == o->dir_ino &&
            !strcmp(b ? b + 1 : l->target, base))
            return 1;
    }
    return 0;
}

static int open_temporary(gpc_output *o, const char *path, char *target)
{
    o->target = target;
    char *dir = directory_of(target);
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        o->dir_dev = (unsigned long long)sb.st_dev;
        o->dir_ino = (unsigned long long)sb.st_ino;
        if (same_as_live(o)) {
            free(dir);
            return gpc_fail(GPC_EUSAGE, "%s: named for two outputs; give each its own file",
                            path);
        }
    }
    free(dir);
    if (written_by_another(target))
        return busy(path); /* before any work is done for nothing */
    o->tmp = temporary_name(target);
    int fd = mkstemp(o->tmp);
    if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
        int err = errno;
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        return gpc_fail(GPC_EINPUT, "%s: cannot create: %s", path, strerror(err));
    }
    lock_whole(fd);
    o->close_f = 1;
    track(o);
    return GPC_OK;
}

static int open_path(gpc_output *o, const char *path)
{
    char *target;
    int fd;
    int st = follow_links(path, &target, &fd);
    if (st != GPC_OK)
        return st;
    if (fd >= 0) {
        free(target);
        return open_direct(o, path, fd);
    }
    struct stat sb;
    if (stat(target, &sb) != 0 || S_ISREG(sb.st_mode))
        return open_temporary(o, path, target); /* a new file, or one to replace whole */
    free(target);
    if (S_ISDIR(sb.st_mode))
        return gpc_fail(GPC_EINPUT, "%s: is a directory; give a file name", path);
    return open_direct(o, path, -1); /* device, FIFO: write into it, never replace it */
}

int gpc_output_open(const char *path, gpc_output **out)
{
    *out = NULL;
    if (path && !path[0])
        return gpc_fail(GPC_EUSAGE, "an output file name is empty: give a path, or - for "
                                    "standard output");
    int std = !path || !strcmp(path, "-");
    gpc_output *o = gpc_calloc(1, sizeof *o);
    o->name = gpc_strdup(std ? "<stdout>" : path);
    if (std) {
        o->f = stdout;
        *out = o;
        return GPC_OK;
    }
    int st = open_path(o, path);
    if (st != GPC_OK) {
        output_free(o);
        return st;
    }
    *out = o;
    return GPC_OK;
}

FILE *gpc_output_file(gpc_output *o) { return o->f; }

const char *gpc_output_name(const gpc_output *o) { return o->name; }

int gpc_output_whole(const gpc_output *o) { return o->target != NULL; }

/* ---- committing ----------------------------------------------------------------- */

/* POSIX can only read the umask by setting it. */
static mode_t current_umask(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return mask;
}

/* The temporary gets the permissions of the file it replaces, or those a
 * plain fopen would give a new one (mkstemp made it 0600). */
static void copy_mode(gpc_output *o)
{
    struct stat sb;
    mode_t mode = stat(o->target, &sb) == 0 ? sb.st_mode & 07777 : 0666 & ~current_umask();
    (void)fchmod(fileno(o->f), mode); /* best effort: the data matter more */
}

int gpc_output_flush(gpc_output *o)
{
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        return write_error(o->name, errno);
    return GPC_OK;
}

static int finish_stream(gpc_output *o)
{
    errno = 0;
    int failed = fflush(o->f) != 0 || ferror(o->f);
    /* a regular file only: a pipe or terminal has nothing to sync */
    if (!failed && o->durable && o->tmp)
        failed = fsync(fileno(o->f)) != 0;
    int err = errno;
    if (o->tmp)
        copy_mode(o);
    if (o->close_f && fclose(o->f) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    return failed ? write_error(o->name, err) : GPC_OK;
}

int gpc_output_publish(gpc_output *o)
{
    int st = gpc_output_flush(o);
    if (st != GPC_OK || !o->tmp)
        return st;
    copy_mode(o);
    if ((st = replace_target(o)) != GPC_OK)
        return st;
    untrack(o);
    return GPC_OK;
}

int gpc_output_commit(gpc_output *o)
{
    int st = finish_stream(o);
    if (st == GPC_OK && o->tmp)
        st = replace_target(o);
    if (st != GPC_OK && o->tmp)
        unlink(o->tmp);
    output_free(o);
    return st;
}

void gpc_output_durable(gpc_output *o) { o->durable = 1; }

void gpc_output_abort(gpc_output *o)
{
    if (!o)
        return;
    if (o->close_f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    output_free(o);
}
