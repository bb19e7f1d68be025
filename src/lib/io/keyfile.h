/* keyfile — reading the tools' "key value" text files (model files,
 * checkpoints) line by line, with the line number in every message.
 * Blank lines and lines whose first non-blank character is '#' are
 * skipped; a key is separated from its value by blanks or tabs. */
#ifndef GPC_KEYFILE_H
#define GPC_KEYFILE_H

#include <stddef.h>

typedef struct {
    const char *name;  /* the file, for messages */
    const char *what;  /* what it is, for messages: "model file", "checkpoint" */
    char *pos, *end;   /* the unread part of the file's text (cut in place) */
    size_t line;
} gpc_keyfile;

/* The next line that is neither blank nor a comment, without its newline
 * (cut in place) and leading blanks; NULL at the end. */
char *gpc_keyfile_line(gpc_keyfile *r);

/* Bytes not yet read: every number still to come takes at least two of them
 * (a digit and a separator), which bounds what a stated count can be. */
size_t gpc_keyfile_left(const gpc_keyfile *r);

/* Read "key value" where value is the rest of the line; GPC_EINPUT
 * (message set) if the next line is not that key. */
int gpc_keyfile_expect(gpc_keyfile *r, const char *key, char **value);

/* Whether the next line that is neither blank nor a comment is "key ...";
 * reads nothing, so that an optional key can be skipped. */
int gpc_keyfile_next_is(const gpc_keyfile *r, const char *key);

/* A finite number at s: with end, *end is set after it; without, nothing
 * but blanks may follow.  GPC_EINPUT (message set) otherwise. */
int gpc_keyfile_number(gpc_keyfile *r, const char *s, double *x, char **end);

/* "key N" with N a whole number from 0 to 1e9. */
int gpc_keyfile_count(gpc_keyfile *r, const char *key, size_t *out);

/* The number of blank-separated tokens in s. */
size_t gpc_keyfile_tokens(const char *s);

#endif
