/*
 * What the C test programs share: check counters and macros, allocation, reading the
 * vector lines (from vectors_to_lines.py) and decoding their hex fields.
 * Header-only (static inline: a program that leaves one out gets no warning).
 * C99 and C++.
 */
#ifndef KEYROUTE_TESTING_H
#define KEYROUTE_TESTING_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyroute.h"

static long checks, failures;

static inline void check_at(int ok, const char *what, const char *detail, int line)
{
    checks++;
    if (!ok) {
        failures++;
        if (failures <= 50)
            fprintf(stderr, "FAIL line %d: %s%s%s\n", line, what, detail ? ": " : "",
                    detail ? detail : "");
    }
}
#define CHECK(cond) check_at((cond) ? 1 : 0, #cond, NULL, __LINE__)
#define CHECKD(cond, detail) check_at((cond) ? 1 : 0, #cond, (detail), __LINE__)
static inline void check_status(keyroute_status got, keyroute_status want, const char *what,
                                int line)
{
    check_at(got == want, what, got == want ? NULL : keyroute_status_str((int32_t)got), line);
}
/* Evaluates `call` once and checks its status. */
#define ST(call, want) check_status((call), (want), #call " == " #want, __LINE__)

static inline const uint8_t *B(const char *s) { return (const uint8_t *)s; }

static inline void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fputs("out of memory\n", stderr);
        exit(2);
    }
    return p;
}

/* Reads one line (without the newline) into a growing buffer; returns 0 at EOF. */
static inline int read_line(FILE *f, char **buf, size_t *cap)
{
    size_t n = 0;
    int c;
    while ((c = fgetc(f)) != EOF && c != '\n') {
        if (n + 1 >= *cap) {
            char *nb;
            *cap = *cap ? *cap * 2 : 256;
            nb = (char *)realloc(*buf, *cap);
            if (!nb) {
                fputs("out of memory\n", stderr);
                exit(2);
            }
            *buf = nb;
        }
        (*buf)[n++] = (char)c;
    }
    if (c == EOF && n == 0)
        return 0;
    if (!*buf) {
        *cap = 1;
        *buf = (char *)xmalloc(1);
    }
    (*buf)[n] = '\0';
    return 1;
}

static inline int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Decodes hex ("-" = empty) into a new NUL-terminated buffer; *len (if not NULL) gets
 * the byte count. */
static inline char *unhex(const char *s, size_t *len)
{
    size_t n = strcmp(s, "-") == 0 ? 0 : strlen(s) / 2, i;
    char *out = (char *)xmalloc(n + 1);
    for (i = 0; i < n; i++)
        out[i] = (char)(hexval(s[2 * i]) * 16 + hexval(s[2 * i + 1]));
    out[n] = '\0';
    if (len)
        *len = n;
    return out;
}

/* Splits a line in place on spaces; returns the number of fields. */
static inline size_t split(char *line, char **fields, size_t max)
{
    size_t n = 0;
    char *p = line;
    while (*p && n < max) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        fields[n++] = p;
        while (*p && *p != ' ')
            p++;
        if (*p)
            *p++ = '\0';
    }
    return n;
}

/* A member list decoded from `m` hex fields (for the seed calls); free with
 * members_free(). */
typedef struct {
    const uint8_t **ptrs;
    size_t *lens;
    size_t n;
} members;

static inline members members_unhex(char **fields, size_t m)
{
    members ms;
    size_t j;
    ms.ptrs = (const uint8_t **)xmalloc(m * sizeof *ms.ptrs);
    ms.lens = (size_t *)xmalloc(m * sizeof *ms.lens);
    ms.n = m;
    for (j = 0; j < m; j++)
        ms.ptrs[j] = (const uint8_t *)unhex(fields[j], &ms.lens[j]);
    return ms;
}

static inline void members_free(members ms)
{
    size_t j;
    for (j = 0; j < ms.n; j++)
        free((void *)ms.ptrs[j]);
    free((void *)ms.ptrs);
    free(ms.lens);
}

static inline int same(const char *a, size_t alen, const char *b, size_t blen)
{
    return alen == blen && memcmp(a, b, alen) == 0;
}

#endif
