/* test_colnames — column names in kernel specs, matching a model's columns
 * by name, and names as model-file tokens. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "io/colnames.h"
#include "kernels/kernel.h"
#include "tap.h"

static char *const NAMES[] = {"age", "bmi", "dose_mg", "x.1", "blood pressure", NULL};

static void expect_resolved(const char *spec, const char *want)
{
    char *out = NULL;
    int st = gpc_colnames_resolve(spec, NAMES, "x.csv", &out);
    TEST_OK(st == GPC_OK && !strcmp(out, want), "'%s' -> '%s' (got %s)", spec, want,
            st == GPC_OK ? out : gpc_errmsg());
    free(out);
}

static void expect_refused(const char *spec, char *const *names, const char *want)
{
    char *out = NULL;
    int st = gpc_colnames_resolve(spec, names, "x.csv", &out);
    const char *msg = gpc_errmsg();
    TEST_OK(st == GPC_EUSAGE && out == NULL && strstr(msg, want), "'%s' refused: %s (got %s)",
            spec, want, st == GPC_OK ? out : msg);
    free(out);
}

static void test_resolve(void)
{
    expect_resolved("ard", "ard");
    expect_resolved("ard@1-3,5+bias", "ard@1-3,5+bias"); /* numbers stay as they are */
    expect_resolved("ard@age,bmi+linear@dose_mg", "ard@1,2+linear@3");
    expect_resolved("se@bmi-x.1", "se@2-4");             /* a range of names */
    expect_resolved("ard@age,2-3+bias:discrete=dose_mg", "ard@1,2-3+bias:discrete=3");
    expect_resolved("ard@x.1:simplex=2,3:per-class=3", "ard@4:simplex=2,3:per-class=3");
    /* a name only starts a list item: '5x' is left for the kernel parser */
    expect_resolved("se@5x", "se@5x");
    expect_refused("ard@agee", NAMES, "x.csv has no column named 'agee' (its columns: 'age', "
                                      "'bmi', 'dose_mg', 'x.1', 'blood pressure')");
    expect_refused("ard@age", NULL, "names a column, 'age', but x.csv has no header line");
    expect_refused("bias:discrete=sex", NAMES, "no column named 'sex'");

    /* the kernel parser then sees what it always saw */
    char *out;
    gpc_kernel *k;
    gpc_colnames_resolve("ard@bmi,dose_mg+bias", NAMES, "x.csv", &out);
    TEST_OK(gpc_kernel_parse(out, 5, &k) == GPC_OK && !strcmp(gpc_kernel_spec(k), "ard@2,3+bias"),
            "the resolved spec parses as numbers would");
    TEST_OK(gpc_kernel_param_column(k, 0) == -1 && gpc_kernel_param_column(k, 1) == 1 &&
                gpc_kernel_param_column(k, 2) == 2 && gpc_kernel_param_column(k, 3) == -1,
            "the length scales know their columns (log_v0 none, log_w2 bmi, log_w3 dose_mg)");
    gpc_kernel_free(k);
    free(out);
}

/* Names in double quotes: any byte but NUL, '""' a quote. */
static void test_quoted(void)
{
    char *const names[] = {"worst radius", "mean texture", "a\"b", "x+y:z,w-v", "3", "age",
                           "\"", NULL};
    static const struct {
        const char *spec, *want;
    } ok[] = {
        {"ard@\"worst radius\",\"mean texture\"", "ard@1,2"},
        {"ard@\"worst radius\"-age+bias", "ard@1-6+bias"},   /* a range, bare at one end */
        {"se@age-\"mean texture\"", "se@6-2"},               /* left for the parser to judge */
        {"ard@\"a\"\"b\"", "ard@3"},                         /* a doubled quote */
        {"ard@\"x+y:z,w-v\"+bias", "ard@4+bias"},            /* '+', ':', ',' and '-' inside */
        {"ard@\"3\"", "ard@5"},                              /* a name, not column 3 */
        {"ard@3", "ard@3"},                                  /* a number, as always */
        {"ard@\"\"\"\"", "ard@7"},                           /* the name that is one quote */
        {"ard+bias:discrete=\"worst radius\",2", "ard+bias:discrete=1,2"},
        {"ard@1-2,\"age\":discrete=\"x+y:z,w-v\":per-class=2", "ard@1-2,6:discrete=4:per-class=2"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        char *out = NULL;
        int st = gpc_colnames_resolve(ok[i].spec, names, "x.csv", &out);
        TEST_OK(st == GPC_OK && !strcmp(out, ok[i].want), "'%s' -> '%s' (got %s)", ok[i].spec,
                ok[i].want, st == GPC_OK ? out : gpc_errmsg());
        free(out);
    }
    expect_refused("ard@\"worst radius", names, "unterminated quote in '\"worst radius'");
    expect_refused("ard@\"a\"\"", names, "unterminated quote");
    expect_refused("ard@\"\"", names, "empty column name");
    expect_refused("ard@1,\"\"+bias", names, "empty column name");
    expect_refused("ard@\"worst  radius\"", names, "no column named 'worst  radius'");
    expect_refused("ard@\"Age\"", names, "no column named 'Age'");
    expect_refused("ard@3\"age\"", names, "a quoted name must stand alone");
    expect_refused("ard@\"age\"3", names, "a quoted name must stand alone");
    expect_refused("ard@\"age\"\"3\"", names, "no column named 'age\"3'");
    expect_refused("ard@\"age\"", NULL, "names a column, 'age', but x.csv has no header line");
    /* an unquoted name with a blank: the message says how to quote */
    expect_refused("ard@worst radius", names, "write a name with blanks or other signs in "
                                              "double quotes, a quote in it doubled, as in "
                                              "ard@\"worst radius\"");
    expect_refused("ard@agee", names, "no column named 'agee'");
}

static void test_word(void)
{
    char buf[16];
    TEST_OK(gpc_colnames_word("worst radius", buf, sizeof buf) && !strcmp(buf, "worst_radius"),
            "'worst radius' as a word is worst_radius");
    TEST_OK(gpc_colnames_word("Sepal.Length", buf, sizeof buf) && !strcmp(buf, "Sepal.Length"),
            "letters, digits, '.' stay");
    TEST_OK(gpc_colnames_word("a-b/\xc3\xa9", buf, sizeof buf) && !strcmp(buf, "a_b___"),
            "other bytes are '_' each");
    TEST_OK(!gpc_colnames_word("", buf, sizeof buf), "an empty name is no word");
    TEST_OK(!gpc_colnames_word("sixteen letters!", buf, sizeof buf), "nor one too long");
}

static void test_match(void)
{
    char *const model[] = {"bmi", "age", NULL};
    char *const input[] = {"age", "sex", "bmi", NULL};
    size_t *ix = NULL;
    int st = gpc_colnames_match(model, input, "test.csv", &ix);
    TEST_OK(st == GPC_OK && ix[0] == 2 && ix[1] == 0,
            "model columns bmi, age found at input columns 3 and 1, sex ignored");
    free(ix);
    char *const lacking[] = {"age", "sex", NULL};
    ix = NULL;
    st = gpc_colnames_match(model, lacking, "test.csv", &ix);
    TEST_OK(st == GPC_EINPUT && !ix &&
                strstr(gpc_errmsg(), "test.csv has no column named 'bmi', which the model was "
                                     "trained on (its columns: 'age', 'sex')"),
            "a missing column is named (%s)", gpc_errmsg());
}

static void test_encode(void)
{
    const char *names[] = {"age", "blood pressure", "100%", "#1", "caf\xc3\xa9", "a\tb"};
    const char *tokens[] = {"age", "blood%20pressure", "100%25", "%231", "caf%C3%A9", "a%09b"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *e = gpc_colnames_encode(names[i]), *d = gpc_colnames_decode(e);
        TEST_OK(!strcmp(e, tokens[i]) && d && !strcmp(d, names[i]), "'%s' is the token '%s' "
                "and back (got %s)", names[i], tokens[i], e);
        free(e);
        free(d);
    }
    const char *bad[] = {"a%2", "a%zz", "%00", "%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *d = gpc_colnames_decode(bad[i]);
        TEST_OK(d == NULL, "malformed token '%s' refused", bad[i]);
        free(d);
    }
}

/* The pair a left-to-right reading meets first, as the readers name it. */
static void expect_repeated(char *const *names, int want, size_t first, size_t second)
{
    size_t i = 99, j = 99;
    int got = gpc_colnames_repeated(names, gpc_colnames_count(names), &i, &j);
    TEST_OK(got == want && (!want || (i == first && j == second)),
            "'%s'...: %s (got %d, %zu and %zu)", names[0] ? names[0] : "", want ? "repeated" :
            "distinct", got, i, j);
}

static void test_repeated(void)
{
    expect_repeated((char *const[]){NULL}, 0, 0, 0);
    expect_repeated((char *const[]){"a", NULL}, 0, 0, 0);
    expect_repeated((char *const[]){"b", "a", "c", NULL}, 0, 0, 0);
    expect_repeated((char *const[]){"a", "b", "a", NULL}, 1, 0, 2);
    /* 'z' is met again first, at place 3, though 'a' sorts before it */
    expect_repeated((char *const[]){"z", "a", "b", "z", "a", "a", NULL}, 1, 0, 3);
    expect_repeated((char *const[]){"q", "a", "a", "a", NULL}, 1, 1, 2);

    /* 200 000 names, the last two alike: sorting finds them at once */
    size_t n = 200000;
    char **many = malloc((n + 1) * sizeof *many);
    for (size_t j = 0; j < n; j++) {
        many[j] = malloc(16);
        snprintf(many[j], 16, "c%zu", j + 1);
    }
    many[n] = NULL;
    expect_repeated(many, 0, 0, 0);
    snprintf(many[n - 1], 16, "c7");
    expect_repeated(many, 1, 6, n - 1);
    /* and a model's columns are found among as many inputs */
    char *const wanted[] = {"c199999", "c1", NULL};
    size_t *ix = NULL;
    TEST_OK(gpc_colnames_match(wanted, many, "wide.csv", &ix) == GPC_OK && ix[0] == n - 2 &&
                ix[1] == 0, "two names found among 200 000");
    free(ix);
    gpc_colnames_free(many);
}

int main(void)
{
    test_resolve();
    test_quoted();
    test_word();
    test_match();
    test_encode();
    test_repeated();
    return tap_done();
}
