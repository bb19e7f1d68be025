#include "report/plot.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/err.h"

extern char **environ;

#define INSTALL_HINT "install gnuplot with the pngcairo and svg terminals (Debian: apt-get install gnuplot-nox)"
#define ROOM_HINT "free some space there, or set TMPDIR to a directory with room"

/* A file in the directory, by its full path, recorded before it is made
 * (by this code or by gnuplot), so that the directory can be emptied by
 * unlink alone: no listing, no memory, nothing a signal handler may not do. */
typedef struct plot_file {
    struct plot_file *next;
    const char *name; /* the last component, within path */
    char path[];
} plot_file;

struct gpc_plot {
    gpc_plot_format fmt;
    char *dir;                 /* the temporary directory, removed by gpc_plot_free */
    plot_file *volatile files; /* every file that is or may be in it */
    volatile pid_t gnuplot;    /* while gnuplot runs, its process; else 0 */
    FILE *script;
    int width, height;
    gpc_plot *volatile next;   /* in the list of live directories */
};

/* Directories not yet removed, for gpc_die and the fatal-signal handler to
 * remove (gpc_on_die).  A node is linked only once complete and unlinked
 * only once its directory is gone. */
static gpc_plot *volatile live;

/* Stop gnuplot if it runs (it would go on writing into the directory),
 * then remove the files and the directory.  Async-signal-safe: kill,
 * waitpid, unlink and rmdir over paths made in advance. */
static void remove_dir(gpc_plot *p)
{
    pid_t pid = p->gnuplot;
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        p->gnuplot = 0;
    }
    for (plot_file *f = p->files; f; f = f->next)
        unlink(f->path);
    rmdir(p->dir);
}

static void remove_live(void)
{
    for (gpc_plot *p = live; p; p = p->next)
        remove_dir(p);
}

static void track(gpc_plot *p)
{
    static int hooked;
    if (!hooked) {
        gpc_on_die(remove_live);
        hooked = 1;
    }
    p->next = live;
    live = p;
}

static void untrack(gpc_plot *p)
{
    for (gpc_plot *volatile *pp = &live; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
}

/* The fatal signals held back (the old mask in old) around a step that
 * makes something and records it, so that the handler finds either both
 * done or neither. */
static void hold_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &set, old);
}

static void release_signals(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}

int gpc_plot_format_parse(const char *name, gpc_plot_format *fmt)
{
    if (!strcmp(name, "png"))
        *fmt = GPC_PLOT_PNG;
    else if (!strcmp(name, "svg"))
        *fmt = GPC_PLOT_SVG;
    else
        return gpc_fail(GPC_EUSAGE, "unknown picture format '%s' (use png or svg)", name);
    return GPC_OK;
}

int gpc_plot_format_of_path(const char *path, gpc_plot_format *fmt)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    *fmt = GPC_PLOT_PNG;
    if (!dot || (slash && dot < slash))
        return GPC_OK; /* no suffix ("plot", /dev/stdout): the default */
    if (!strcasecmp(dot, ".png"))
        return GPC_OK;
    if (!strcasecmp(dot, ".svg"))
        return *fmt = GPC_PLOT_SVG, GPC_OK;
    return gpc_fail(GPC_EUSAGE, "cannot tell the picture format from '%s'; name it .png or "
                    ".svg, or give -F png or -F svg", path);
}

/* dir/name, recorded (once) as a file to remove before anything makes it;
 * the plot owns the path. */
static const char *file_path(gpc_plot *p, const char *name)
{
    for (plot_file *f = p->files; f; f = f->next)
        if (!strcmp(f->name, name))
            return f->path;
    size_t dlen = strlen(p->dir), nlen = strlen(name);
    plot_file *f = gpc_malloc(sizeof *f + dlen + nlen + 2);
    memcpy(f->path, p->dir, dlen);
    f->path[dlen] = '/';
    memcpy(f->path + dlen + 1, name, nlen + 1);
    f->name = f->path + dlen + 1;
    f->next = p->files;
    p->files = f; /* linked complete: the handler may walk the list */
    return f->path;
}

static const char *picture_name(const gpc_plot *p)
{
    return p->fmt == GPC_PLOT_PNG ? "picture.png" : "picture.svg";
}

void gpc_plot_put_string(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        /* a newline would end the command */
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('\'', f);
}

/* Recorded too: a file the script names may be one gnuplot writes (the
 * contour tables). */
void gpc_plot_put_data(gpc_plot *p, const char *name)
{
    gpc_plot_put_string(p->script, file_path(p, name));
}

/* head.gp: the terminal and the output, run before the figure's script. */
static int write_terminal(gpc_plot *p)
{
    int width = p->width, height = p->height;
    FILE *f = gpc_plot_data_open(p, "head.gp");
    if (!f)
        return GPC_EINPUT;
    if (p->fmt == GPC_PLOT_PNG)
        fprintf(f, "set terminal pngcairo size %d,%d noenhanced font 'sans,10'\n", width,
                height);
    else
        fprintf(f, "set terminal svg size %d,%d noenhanced font 'sans,10' "
                "background rgb 'white'\n", width, height);
    fputs("set encoding utf8\nset output ", f);
    gpc_plot_put_string(f, file_path(p, picture_name(p)));
    fputc('\n', f);
    return gpc_plot_data_close(p, f);
}

void gpc_plot_size(gpc_plot *p, int width, int height)
{
    p->width = width;
    p->height = height;
}

/* Make the directory under tmp and track it, with no signal between the
 * two; 0 or the errno of the failure. */
static int make_dir(gpc_plot *p, const char *tmp)
{
    p->dir = gpc_malloc(strlen(tmp) + sizeof "/gpc-plot.XXXXXX");
    sprintf(p->dir, "%s/gpc-plot.XXXXXX", tmp);
    sigset_t old;
    hold_signals(&old);
    int made = mkdtemp(p->dir) != NULL, e = made ? 0 : errno ? errno : EIO;
    if (made)
        track(p);
    release_signals(&old);
    return e;
}

int gpc_plot_open(gpc_plot_format fmt, gpc_plot **out)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    gpc_plot *p = gpc_calloc(1, sizeof *p);
    p->fmt = fmt;
    p->width = 640;
    p->height = 480;
    int e = make_dir(p, tmp);
    if (e) {
        free(p->dir);
        free(p);
        return gpc_fail(GPC_EINPUT, "cannot make a temporary directory in %s: %s (set TMPDIR "
                        "to a writable directory)", tmp, strerror(e));
    }
    p->script = fopen(file_path(p, "plot.gp"), "w");
    if (!p->script) {
        e = errno;
        gpc_plot_free(p);
        return gpc_fail(GPC_EINPUT, "cannot write a gnuplot script in %s: %s", tmp,
                        strerror(e));
    }
    *out = p;
    return GPC_OK;
}

FILE *gpc_plot_script(gpc_plot *p)
{
    return p->script;
}

FILE *gpc_plot_data_open(gpc_plot *p, const char *name)
{
    const char *path = file_path(p, name);
    FILE *f = fopen(path, "w");
    if (!f)
        gpc_fail(GPC_EINPUT, "%s: %s", path, strerror(errno));
    return f;
}

/* Flush and close f: 0, or the errno of the call that failed.  The flush
 * comes first so that a full disk is reported while errno still says so
 * (fclose's own failure would leave it to chance). */
static int close_stream(FILE *f)
{
    errno = 0;
    int err = fflush(f) != 0 || ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    return err;
}

int gpc_plot_data_close(gpc_plot *p, FILE *f)
{
    int err = close_stream(f);
    if (err)
        return gpc_fail(GPC_EINPUT, "cannot write gnuplot's data in %s: %s; " ROOM_HINT,
                        p->dir, strerror(err));
    return GPC_OK;
}

/* The last line of gnuplot's messages that says something (its error). */
static void last_message(const char *log, char *buf, size_t size)
{
    FILE *f = fopen(log, "r");
    char line[512];
    buf[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (strspn(line, " \t^") < strlen(line))
            snprintf(buf, size, "%s", line + strspn(line, " \t"));
    }
    fclose(f);
}

/* Run `gnuplot -d head script` with its messages to log; its exit status as
 * waitpid gives it, or a failure to start it.  While it runs, p->gnuplot
 * names it for the handler to stop: set with the signals held, so that no
 * signal comes between the start and the record, and cleared before it is
 * reaped, so that the handler never signals a process id no longer ours. */
static int spawn_gnuplot(gpc_plot *p, const char *head, const char *script, const char *log,
                         int *wstatus)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {"gnuplot", "-d", (char *)head, (char *)script, NULL};
    sigset_t old;
    hold_signals(&old);
    /* gnuplot gets the mask as it was, not the one held here */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigmask(&attr, &old);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    int e = posix_spawnp(&pid, "gnuplot", &fa, &attr, argv, environ);
    if (e == 0)
        p->gnuplot = pid;
    release_signals(&old);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0)
        return gpc_fail(GPC_EINPUT, "cannot run gnuplot: %s; %s",
                        e == ENOENT ? "not found on PATH" : strerror(e), INSTALL_HINT);
    siginfo_t info;
    while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0)
        if (errno != EINTR)
            return gpc_fail(GPC_EINPUT, "waiting for gnuplot: %s", strerror(errno));
    hold_signals(&old);
    p->gnuplot = 0;
    waitpid(pid, wstatus, 0);
    release_signals(&old);
    return GPC_OK;
}

/* Whether the picture in, of size bytes, ends as a whole file of its format
 * does: a PNG with its IEND chunk, an SVG with its closing tag (and white
 * space).  gnuplot exits 0 after a write that failed, a full disk say, and
 * leaves the picture cut short. */
static int picture_whole(FILE *in, off_t size, gpc_plot_format fmt)
{
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60,
                                           0x82};
    unsigned char tail[64];
    size_t n = size < (off_t)sizeof tail ? (size_t)size : sizeof tail;
    if (fseeko(in, size - (off_t)n, SEEK_SET) != 0 || fread(tail, 1, n, in) != n)
        return 0;
    if (fmt == GPC_PLOT_PNG)
        return n >= sizeof iend && !memcmp(tail + n - sizeof iend, iend, sizeof iend);
    while (n > 0 && isspace(tail[n - 1]))
        n--;
    return n >= 6 && !memcmp(tail + n - 6, "</svg>", 6);
}

/* Why a picture in dir came out short: a full disk when statvfs says so
 * (gnuplot tells nothing), else what can be said without its errno. */
static int picture_short(const gpc_plot *p, off_t size, const char *msg)
{
    struct statvfs vfs;
    const char *said = *msg ? "; gnuplot: " : "";
    if (statvfs(p->dir, &vfs) == 0 && (vfs.f_bavail == 0 || vfs.f_favail == 0))
        return gpc_fail(GPC_EINPUT, "gnuplot could not write the whole picture in %s: %s%s%s; "
                        ROOM_HINT, p->dir, strerror(ENOSPC), said, msg);
    return gpc_fail(GPC_EINPUT, "gnuplot's picture in %s is cut short (%lld bytes, without "
                    "the end of a %s file)%s%s; is the disk full or over quota? " ROOM_HINT,
                    p->dir, (long long)size, p->fmt == GPC_PLOT_PNG ? "PNG" : "SVG", said, msg);
}

/* Copy the picture at path to out (called name in messages), once it is
 * seen to be whole: a cut-short one must not reach out, which may be
 * standard output.  msg: gnuplot's last message, for the error. */
static int copy_picture(const gpc_plot *p, const char *path, const char *msg, FILE *out,
                        const char *name)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return gpc_fail(GPC_EINPUT, "gnuplot drew no picture; %s", INSTALL_HINT);
    struct stat sb;
    if (fstat(fileno(in), &sb) != 0) {
        int e = errno;
        fclose(in);
        return gpc_fail(GPC_EINPUT, "cannot read gnuplot's picture %s: %s", path, strerror(e));
    }
    if (!picture_whole(in, sb.st_size, p->fmt)) {
        fclose(in);
        return picture_short(p, sb.st_size, msg);
    }
    rewind(in);
    char buf[65536];
    size_t n;
    int err = 0;
    while (!err && (n = fread(buf, 1, sizeof buf, in)) > 0) {
        /* errno read at the failing call: an fwrite larger than the
         * stream's buffer leaves nothing for a later fflush to fail on, so
         * nothing after it would say why */
        errno = 0;
        if (fwrite(buf, 1, n, out) != n)
            err = errno ? errno : EIO;
    }
    errno = 0;
    if (!err && fflush(out) != 0)
        err = errno ? errno : EIO;
    int bad = ferror(in);
    fclose(in);
    if (err)
        return gpc_fail(GPC_EINPUT, "%s: write error: %s", name, strerror(err));
    if (bad)
        return gpc_fail(GPC_EINPUT, "cannot read gnuplot's picture %s", path);
    return GPC_OK;
}

int gpc_plot_run(gpc_plot *p, FILE *out, const char *name)
{
    int err = close_stream(p->script);
    p->script = NULL;
    if (err)
        return gpc_fail(GPC_EINPUT, "cannot write the gnuplot script in %s: %s; " ROOM_HINT,
                        p->dir, strerror(err));
    int st = write_terminal(p);
    if (st != GPC_OK)
        return st;
    const char *script = file_path(p, "plot.gp"), *log = file_path(p, "gnuplot.log");
    const char *head = file_path(p, "head.gp"), *picture = file_path(p, picture_name(p));
    int wstatus = 0;
    st = spawn_gnuplot(p, head, script, log, &wstatus);
    if (st == GPC_OK) {
        char msg[400];
        last_message(log, msg, sizeof msg);
        if (WIFSIGNALED(wstatus))
            st = gpc_fail(GPC_EINPUT, "gnuplot was killed by signal %d", WTERMSIG(wstatus));
        else if (WEXITSTATUS(wstatus) != 0)
            st = gpc_fail(GPC_EINPUT, "gnuplot failed (exit status %d)%s%s; %s",
                          WEXITSTATUS(wstatus), *msg ? ": " : "", msg, INSTALL_HINT);
        else {
            if (*msg)
                gpc_info(2, "gnuplot: %s", msg);
            st = copy_picture(p, picture, msg, out, name);
        }
    }
    return st;
}

void gpc_plot_free(gpc_plot *p)
{
    if (!p)
        return;
    if (p->script)
        fclose(p->script);
    /* removed while still tracked: a signal meanwhile finishes the job */
    remove_dir(p);
    untrack(p);
    for (plot_file *f = p->files, *next; f; f = next) {
        next = f->next;
        free(f);
    }
    free(p->dir);
    free(p);
}

/* ---- reliability ----------------------------------------------------------- */

/* bins.dat: lo hi count per bin (for the histogram); curve.dat: mean_pred
 * observed per non-empty bin. */
static int write_bins(gpc_plot *p, const gpc_score_bin *bins, size_t nbins)
{
    FILE *all = gpc_plot_data_open(p, "bins.dat"), *curve;
    if (!all)
        return GPC_EINPUT;
    if (!(curve = gpc_plot_data_open(p, "curve.dat"))) {
        fclose(all);
        return GPC_EINPUT;
    }
    for (size_t b = 0; b < nbins; b++) {
        fprintf(all, "%.17g %.17g %zu\n", bins[b].lo, bins[b].hi, bins[b].count);
        if (bins[b].count > 0)
            fprintf(curve, "%.17g %.17g\n", bins[b].mean_pred, bins[b].observed);
    }
    int st = gpc_plot_data_close(p, all);
    int st2 = gpc_plot_data_close(p, curve);
    return st != GPC_OK ? st : st2;
}

int gpc_plot_reliability(gpc_plot *p, const gpc_score_bin *bins, size_t nbins, int top_label,
                         const char *title)
{
    int st = write_bins(p, bins, nbins);
    if (st != GPC_OK)
        return st;
    FILE *f = p->script;
    size_t n = 0;
    for (size_t b = 0; b < nbins; b++)
        n += bins[b].count;
    const char *xlabel = top_label ? "confidence of the top class" : "predicted p(y = +1)";
    char key[160];
    snprintf(key, sizeof key, "observed (ECE %.4f, %zu bin%s, %zu cases)",
             gpc_score_ece(bins, nbins), nbins, nbins == 1 ? "" : "s", n);
    fputs("set multiplot title ", f);
    gpc_plot_put_string(f, title);
    /* the same margins in both panels, so that their x axes line up */
    fputs("\nset lmargin 10\nset rmargin 4\nset origin 0,0.3\nset size 1,0.64\nset xrange [0:1]\nset yrange [0:1]\n"
          "set grid\nset key top left box opaque\n"
          "set title 'observed frequency against predicted probability, per bin'\n"
          "set xlabel ", f);
    gpc_plot_put_string(f, xlabel);
    fputs("\nset ylabel ", f);
    gpc_plot_put_string(f, top_label ? "accuracy of the top class" : "observed frequency of y = +1");
    fputs("\nplot x with lines dt 2 lw 1.5 lc rgb 'gray40' title 'perfect calibration', \\\n"
          "     ", f);
    gpc_plot_put_data(p, "curve.dat");
    fputs(" using 1:2 with linespoints pt 7 ps 1.2 lw 2 lc rgb '#c0392b' title ", f);
    gpc_plot_put_string(f, key);
    fputs("\nset origin 0,0\nset size 1,0.3\nset yrange [0:*]\nunset key\n"
          "set title 'cases per bin'\nset xlabel ", f);
    gpc_plot_put_string(f, xlabel);
    fputs("\nset ylabel 'cases'\nset style fill solid 0.6 border lc rgb 'gray20'\nplot ", f);
    gpc_plot_put_data(p, "bins.dat");
    fputs(" using (($1 + $2) / 2):3:($2 - $1) with boxes lc rgb '#2c62b8' notitle\n"
          "unset multiplot\n", f);
    return GPC_OK;
}

/* ---- trace ----------------------------------------------------------------- */

static const char *const chain_colours[] = {"#1f5fa8", "#c0392b", "#2e8b3a", "#8e44ad",
                                            "#d68910", "#17a2b8", "#7f4f24", "#555555"};
#define N_COLOURS (sizeof chain_colours / sizeof *chain_colours)

void gpc_plot_grid_shape(size_t k, size_t *rows, size_t *cols)
{
    size_t c = 1;
    while (c * c < k)
        c++;
    *cols = c;
    *rows = (k + c - 1) / c;
}

/* chainI.dat: iteration theta_1 .. theta_p per row. */
static int write_chain(gpc_plot *p, const gpc_chain *c, size_t i)
{
    char name[64];
    snprintf(name, sizeof name, "chain%zu.dat", i + 1);
    FILE *f = gpc_plot_data_open(p, name);
    if (!f)
        return GPC_EINPUT;
    for (size_t r = 0; r < c->rows; r++) {
        fprintf(f, "%ld", c->iteration[r]);
        for (size_t j = 0; j < c->p; j++)
            fprintf(f, " %.17g", c->theta[r * c->p + j]);
        fputc('\n', f);
    }
    return gpc_plot_data_close(p, f);
}

/* The burn-in of a panel: the iterations before x shaded, a dashed line
 * at x and the words 'burn-in' beside it. */
static void mark_burn(FILE *f, double x)
{
    fprintf(f, "set object 1 rect from graph 0, graph 0 to first %.17g, graph 1 behind "
            "fillcolor rgb '#e6e6e6' fillstyle solid 1.0 noborder\n", x);
    fprintf(f, "set arrow 1 from first %.17g, graph 0 to first %.17g, graph 1 nohead dt 2 "
            "lw 1.5 lc rgb 'gray30'\n", x, x);
    fprintf(f, "set label 1 'burn-in' at first %.17g, graph 0.93 right offset -0.5,0 "
            "font 'sans,8' textcolor rgb 'gray30'\n", x);
}

static void trace_panel(gpc_plot *p, gpc_chain *const *chains, char *const *names,
                        size_t nchains, size_t j)
{
    FILE *f = p->script;
    const char *name = chains[0]->names[j];
    fputs("set title ", f);
    gpc_plot_put_string(f, name);
    fputs("\nset ylabel ", f);
    gpc_plot_put_string(f, name);
    fputs("\n", f);
    if (j == 0 && nchains > 1)
        fputs("set key top right opaque box font 'sans,8'\n", f);
    else
        fputs("unset key\n", f);
    fputs("plot ", f);
    for (size_t i = 0; i < nchains; i++) {
        char data[64];
        snprintf(data, sizeof data, "chain%zu.dat", i + 1);
        if (i > 0)
            fputs(", \\\n     ", f);
        gpc_plot_put_data(p, data);
        fprintf(f, " using 1:%zu with lines lw 1.2 lc rgb '%s' title ", j + 2,
                chain_colours[i % N_COLOURS]);
        gpc_plot_put_string(f, names[i]);
    }
    fputc('\n', f);
}

/* A step of 1, 2 or 5 times a power of ten that cuts range in at most 5
 * parts: gnuplot's own choice crowds a small panel's axis with labels. */
static double tic_step(double range)
{
    double step = 1.0;
    while (range / step > 5.0)
        step *= (step / pow(10.0, floor(log10(step) + 1e-9)) < 1.5) ? 2.0
                : (step / pow(10.0, floor(log10(step) + 1e-9)) < 3.0) ? 2.5 : 2.0;
    return step;
}

/* The iterations the chains span, first to last. */
static double iteration_range(gpc_chain *const *chains, size_t nchains)
{
    long lo = chains[0]->iteration[0], hi = lo;
    for (size_t i = 0; i < nchains; i++) {
        const gpc_chain *c = chains[i];
        lo = c->iteration[0] < lo ? c->iteration[0] : lo;
        hi = c->iteration[c->rows - 1] > hi ? c->iteration[c->rows - 1] : hi;
    }
    return (double)(hi - lo);
}

int gpc_plot_trace(gpc_plot *p, gpc_chain *const *chains, char *const *names, size_t nchains,
                   size_t burn, const char *title)
{
    for (size_t i = 0; i < nchains; i++) {
        int st = write_chain(p, chains[i], i);
        if (st != GPC_OK)
            return st;
    }
    FILE *f = p->script;
    size_t k = chains[0]->p, rows, cols;
    gpc_plot_grid_shape(k, &rows, &cols);
    fprintf(f, "set multiplot layout %zu,%zu title ", rows, cols);
    gpc_plot_put_string(f, title);
    fputs("\nset xlabel 'iteration'\nset autoscale xfix\nset grid\n", f);
    fprintf(f, "set xtics %g\n", tic_step(iteration_range(chains, nchains)));
    if (burn > 0 && burn <= chains[0]->rows)
        mark_burn(f, (double)chains[0]->iteration[burn - 1] + 0.5);
    for (size_t j = 0; j < k; j++)
        trace_panel(p, chains, names, nchains, j);
    fputs("unset multiplot\n", f);
    return GPC_OK;
}

/* ---- surface --------------------------------------------------------------- */

/* The classes' colours on a multiclass surface (Tableau's ten, which stay
 * apart for most colour vision), repeated past ten classes; the pale end of
 * each band is the colour mixed with this much white. */
static const char *const class_colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                            "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                            "#bcbd22", "#17becf"};
#define N_CLASS_COLOURS (sizeof class_colours / sizeof *class_colours)
#define PALE 0.85

/* Where a most probable class c of probability q falls on the colour scale
 * of C bands: band c, from its pale start at q = 1/C (a tie of all the
 * classes) to its full colour at q = 1, short of the next band. */
static double band_value(size_t c, double q, size_t C)
{
    double t = (q - 1.0 / (double)C) / (1.0 - 1.0 / (double)C);
    t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    return (double)c + 0.999 * t;
}

/* grid.dat: "x1 x2 v q", a blank line after each x1 (gnuplot's grid
 * format): v the heat map's value (binary: p(y=+1); multiclass: the band
 * value of the most probable class), q the probability the contours are of
 * (p(y=+1), or the most probable class's). */
static int write_grid(gpc_plot *p, const gpc_plot_surface_data *s)
{
    FILE *f = gpc_plot_data_open(p, "grid.dat");
    if (!f)
        return GPC_EINPUT;
    size_t N = s->grid;
    double h1 = (s->hi[0] - s->lo[0]) / (double)(N - 1), h2 = (s->hi[1] - s->lo[1]) / (double)(N - 1);
    for (size_t i = 0; i < N; i++) {
        for (size_t j = 0; j < N; j++) {
            double q = s->prob[i * N + j];
            double v = s->cls ? band_value(s->cls[i * N + j], q, s->nclasses) : q;
            fprintf(f, "%.17g %.17g %.17g %.17g\n", s->lo[0] + (double)i * h1,
                    s->lo[1] + (double)j * h2, v, q);
        }
        fputc('\n', f);
    }
    return gpc_plot_data_close(p, f);
}

static void class_file(size_t c, char *name, size_t size)
{
    snprintf(name, size, "class%zu.dat", c);
}

/* class0.dat ...: the training points of each class (for a binary model 0
 * is y = -1); their numbers in counts. */
static int write_points(gpc_plot *p, const gpc_plot_surface_data *s, size_t *counts)
{
    size_t C = s->nclasses;
    FILE **f = gpc_calloc(C, sizeof *f);
    int st = GPC_OK;
    for (size_t c = 0; c < C && st == GPC_OK; c++) {
        char name[64];
        class_file(c, name, sizeof name);
        if (!(f[c] = gpc_plot_data_open(p, name)))
            st = GPC_EINPUT;
        counts[c] = 0;
    }
    for (size_t i = 0; st == GPC_OK && i < s->points->size1; i++) {
        size_t c = s->point_class[i];
        counts[c]++;
        fprintf(f[c], "%.17g %.17g\n", gsl_matrix_get(s->points, i, 0),
                gsl_matrix_get(s->points, i, 1));
    }
    for (size_t c = 0; c < C; c++)
        if (f[c]) {
            int st2 = gpc_plot_data_close(p, f[c]);
            st = st != GPC_OK ? st : st2;
        }
    free(f);
    return st;
}

/* The contour lines of grid.dat's fourth column, into tables levels.dat
 * (levels) and, when heavy is given, half.dat (that one level), for the
 * 2-D plot to draw. */
static void write_contour_tables(gpc_plot *p, const char *levels, const char *heavy)
{
    FILE *f = p->script;
    fprintf(f, "set view map\nset contour base\nunset surface\n"
            "set cntrparam levels discrete %s\nset table ", levels);
    gpc_plot_put_data(p, "levels.dat");
    fputs("\nsplot ", f);
    gpc_plot_put_data(p, "grid.dat");
    fputs(" using 1:2:4 with lines notitle\nunset table\n", f);
    if (heavy) {
        fprintf(f, "set cntrparam levels discrete %s\nset table ", heavy);
        gpc_plot_put_data(p, "half.dat");
        fputs("\nsplot ", f);
        gpc_plot_put_data(p, "grid.dat");
        fputs(" using 1:2:4 with lines notitle\nunset table\n", f);
    }
    fputs("unset contour\nset surface\n", f);
}

/* '#rrggbb' mixed with white (to 255) or black (to 0) in proportion w. */
static void mix(const char *hex, double w, int to, char *out)
{
    unsigned r, g, b;
    sscanf(hex + 1, "%2x%2x%2x", &r, &g, &b);
    sprintf(out, "#%02x%02x%02x", (unsigned)lround(r + w * (to - (int)r)),
            (unsigned)lround(g + w * (to - (int)g)), (unsigned)lround(b + w * (to - (int)b)));
}

/* The training points of class c, each on a white halo so that it stands
 * out on any colour beneath: a binary model's two classes as circles and
 * squares in dark blue and red, a multiclass model's in the shapes and
 * colours of their bands. */
static void points_plot(gpc_plot *p, const gpc_plot_surface_data *s, size_t c,
                        const size_t *counts)
{
    static const char *const binary_colour[2] = {"#0b2a6b", "#7a0a0a"};
    static const int shapes[] = {7, 5, 9, 11, 13, 15};
    char title[160], name[64], shape[16], colour[8];
    /* darker than the class's region, where most of its points lie */
    if (s->cls)
        mix(class_colours[c % N_CLASS_COLOURS], 0.45, 0, colour);
    else
        snprintf(colour, sizeof colour, "%s", binary_colour[c]);
    snprintf(title, sizeof title, "class %s (%zu)", s->classes[c], counts[c]);
    snprintf(shape, sizeof shape, "pt %d", shapes[c % (sizeof shapes / sizeof *shapes)]);
    class_file(c, name, sizeof name);
    gpc_plot_put_data(p, name);
    fprintf(p->script, " using 1:2 with points %s ps 1.35 lc rgb 'white' notitle, \\\n     ",
            shape);
    gpc_plot_put_data(p, name);
    fprintf(p->script, " using 1:2 with points %s ps 0.9 lc rgb '%s' title ", shape, colour);
    gpc_plot_put_string(p->script, title);
}


/* Binary: p(y=+1) from blue through white to red. */
static void binary_scale(FILE *f, const gpc_plot_surface_data *s)
{
    char cblabel[160];
    snprintf(cblabel, sizeof cblabel, "p(y = %s | x)", s->classes[1]);
    fputs("set cblabel ", f);
    gpc_plot_put_string(f, cblabel);
    fputs("\nset cbrange [0:1]\n"
          "set palette defined (0 '#4a7bd0', 0.5 '#f7f7f7', 1 '#d0584a')\n", f);
}

/* Multiclass: one band of the colour box per class, pale to full, named
 * by the class at its middle; repeating a band's end makes the jump to
 * the next class's colour sharp. */
static void class_scale(FILE *f, const gpc_plot_surface_data *s)
{
    size_t C = s->nclasses;
    char lo[8];
    fprintf(f, "set cblabel 'most probable class, paler where its probability is lower "
            "(1/%zu pale, 1 full)'\nset cbrange [0:%zu]\nset palette defined (", C, C);
    for (size_t c = 0; c < C; c++) {
        const char *hex = class_colours[c % N_CLASS_COLOURS];
        mix(hex, PALE, 255, lo);
        fprintf(f, "%s%zu '%s', %zu '%s'", c ? ", " : "", c, lo, c + 1, hex);
    }
    /* room on the right for the longest class name beside the colour box */
    size_t longest = 0;
    for (size_t c = 0; c < C; c++)
        longest = strlen(s->classes[c]) > longest ? strlen(s->classes[c]) : longest;
    fprintf(f, ")\nset rmargin %zu\nset cbtics scale 0 (", 10 + (longest > 40 ? 40 : longest));
    for (size_t c = 0; c < C; c++) {
        fputs(c ? ", " : "", f);
        gpc_plot_put_string(f, s->classes[c]);
        fprintf(f, " %g", (double)c + 0.5);
    }
    fputs(")\n", f);
}

int gpc_plot_surface(gpc_plot *p, const gpc_plot_surface_data *s)
{
    size_t *counts = gpc_calloc(s->nclasses, sizeof *counts);
    int st = write_grid(p, s);
    if (st == GPC_OK && s->points)
        st = write_points(p, s, counts);
    if (st != GPC_OK) {
        free(counts);
        return st;
    }
    FILE *f = p->script;
    if (s->cls)
        write_contour_tables(p, "0.5, 0.7, 0.9", NULL);
    else
        write_contour_tables(p, "0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9", "0.5");
    fputs("set title ", f);
    gpc_plot_put_string(f, s->title);
    if (s->note && *s->note) {
        fputs(" . \"\\n\" . ", f);
        gpc_plot_put_string(f, s->note);
    }
    fputs("\nset xlabel ", f);
    gpc_plot_put_string(f, s->axes[0]);
    fputs("\nset ylabel ", f);
    gpc_plot_put_string(f, s->axes[1]);
    fputc('\n', f);
    (s->cls ? class_scale : binary_scale)(f, s);
    /* the key under the plot, two entries a row: the contours' and the
     * classes' (two of the first for a binary model, one for multiclass) */
    size_t rows = (s->nclasses + (s->cls ? 1 : 2) + 1) / 2;
    fprintf(f, "set xrange [%.17g:%.17g]\nset yrange [%.17g:%.17g]\n"
            "set bmargin %zu\nset key at screen 0.5, screen 0.01 center bottom ", s->lo[0],
            s->hi[0], s->lo[1], s->hi[1], 4 + rows);
    /* rows fixed, so that gnuplot cannot take one column for a long entry */
    if (s->cls)
        fprintf(f, "vertical maxrows %zu", rows);
    else
        fputs("horizontal maxcols 2", f);
    fputs(" font 'sans,9' samplen 2\nplot ", f);
    gpc_plot_put_data(p, "grid.dat");
    fputs(" using 1:2:3 with image notitle, \\\n     ", f);
    gpc_plot_put_data(p, "levels.dat");
    if (s->cls)
        fputs(" using 1:2 with lines lw 1 lc rgb 'gray25' title "
              "'p(most probable class) = 0.5, 0.7, 0.9'", f);
    else {
        fputs(" using 1:2 with lines lw 1 lc rgb 'gray35' title 'p = 0.1, 0.2, ..., 0.9', \\\n"
              "     ", f);
        gpc_plot_put_data(p, "half.dat");
        fputs(" using 1:2 with lines lw 3.5 lc rgb 'black' title 'p = 0.5'", f);
    }
    for (size_t c = 0; s->points && c < s->nclasses; c++) {
        fputs(", \\\n     ", f);
        points_plot(p, s, c, counts);
    }
    fputc('\n', f);
    free(counts);
    return GPC_OK;
}
