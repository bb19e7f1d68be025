/* colnames — the names of input columns, from a header line (matio), and
 * what they are used for: kernel specs that name columns ('ard@age,bmi'),
 * models that remember the training columns, and test inputs whose columns
 * are matched to a model's by name.
 *
 * A list of names is a NULL-terminated array of strings (as gpc_source's
 * colnames).  In a spec a name stands where a column number may: in a term's
 * column list after '@' and in ':discrete='; a range of names ('age-bmi')
 * runs from the first's column to the second's.  A name made of letters,
 * digits, '_' and '.' that starts with a letter or '_' is written as it is;
 * any other name in double quotes, with a quote in it doubled (as CSV does):
 * 'ard@"worst radius",age' or '"say ""hi"""-"c"'.  A quoted name stands
 * alone as a list item or a range's end; inside the quotes '+', '*', '(',
 * ')', ':', ',' and '-' are the name's own.  Any column can still be given by its number.
 *
 * Hyperparameters that weigh one column (an ARD length scale) are also
 * named after it (kernel.h): the name as a word, every byte other than a
 * letter, digit, '_' or '.' written as '_' ("worst radius" is
 * "worst_radius"). */
#ifndef GPC_COLNAMES_H
#define GPC_COLNAMES_H

#include <stddef.h>
#include <stdio.h>

/* How many names (0 for NULL). */
size_t gpc_colnames_count(char *const *names);
char **gpc_colnames_copy(char *const *names);
void gpc_colnames_free(char **names);

/* Whether two of the n strings names[0..n) are equal, found in O(n log n)
 * (a header may name hundreds of thousands of columns).  If so, *first and
 * *second are the places of the pair that reading left to right meets first:
 * *second as small as it can be, *first the earliest place of that name. */
int gpc_colnames_repeated(char *const *names, size_t n, size_t *first, size_t *second);

/* spec with every column name replaced by its 1-based number, in a new
 * string *out (a spec without names comes back unchanged).  A name that is
 * not a column, or names without a header (names NULL), is GPC_EUSAGE with
 * a message that lists the columns or says how to name them; xname names
 * the inputs in it. */
int gpc_colnames_resolve(const char *spec, char *const *names, const char *xname, char **out);

/* name as a word of letters, digits, '_' and '.' (any other byte '_') in
 * buf; 0 if it does not fit in size or is empty. */
int gpc_colnames_word(const char *name, char *buf, size_t size);

/* For each of the model's columns, the index of the input column of the
 * same name (the first, if the input names one twice), found by sorting:
 * a new array in *index.  A model column the input lacks is
 * GPC_EINPUT naming it; input columns the model does not use are ignored. */
int gpc_colnames_match(char *const *model, char *const *input, const char *xname,
                       size_t **index);

/* A name as one token for the model file: blanks, '%', '#', control and
 * non-ASCII bytes as %XX; and back (NULL if malformed).  New strings. */
char *gpc_colnames_encode(const char *name);
char *gpc_colnames_decode(const char *token);

/* The line "KEY NAME..." with every name encoded, as model files and chains
 * record the inputs' columns; nothing when names is NULL. */
void gpc_colnames_write_line(FILE *f, const char *key, char *const *names);

#endif
