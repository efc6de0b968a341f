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
/* On a mismatch: the status got, its name and the last error message. */
static inline void check_status(keyroute_status got, keyroute_status want, const char *what,
                                int line)
{
    char detail[600];
    if (got != want)
        snprintf(detail, sizeof detail, "got %d %s (%s)", (int)got,
                 keyroute_status_name((int32_t)got), keyroute_last_error_message());
    check_at(got == want, what, got == want ? NULL : detail, line);
}
/* Evaluates `call` once and checks its status. */
#define ST(call, want) check_status((call), (want), #call " == " #want, __LINE__)
/* As ST, and the last error message must contain `part`. */
#define STM(call, want, part)                                                                 \
    do {                                                                                      \
        check_status((call), (want), #call " == " #want, __LINE__);                           \
        check_at(strstr(keyroute_last_error_message(), (part)) != NULL,                       \
                 "message of " #call " contains " #part, keyroute_last_error_message(),        \
                 __LINE__);                                                                   \
    } while (0)

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

/* Fields of a line read one after another (test_contract.c). */
typedef struct {
    char **f;
    size_t n, i;
    int bad; /* a field was missing */
} cursor;

static inline const char *next_field(cursor *c)
{
    if (c->i >= c->n) {
        c->bad = 1;
        return "0";
    }
    return c->f[c->i++];
}
/* The next field, hex-decoded into a new NUL-terminated buffer (free it). */
static inline char *next_text(cursor *c, size_t *len) { return unhex(next_field(c), len); }
static inline long long next_i64(cursor *c) { return strtoll(next_field(c), NULL, 10); }
static inline unsigned long long next_u64(cursor *c) { return strtoull(next_field(c), NULL, 10); }

/* SHA-1 of `len` bytes as 40 lowercase hex digits into out[41] (to check the scripts'
 * SHA1 fields without trusting the library's own). */
static inline uint32_t sha1_rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }
static inline void sha1_block(uint32_t h[5], const uint8_t *p)
{
    uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f, k, t;
    int i;
    for (i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (i = 16; i < 80; i++)
        w[i] = sha1_rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    for (i = 0; i < 80; i++) {
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5A827999u;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ED9EBA1u;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8F1BBCDCu;
        } else {
            f = b ^ c ^ d;
            k = 0xCA62C1D6u;
        }
        t = sha1_rol(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = sha1_rol(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}
static inline void sha1_hex(const uint8_t *data, size_t len, char out[41])
{
    uint32_t h[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
    uint8_t block[64];
    uint64_t bits = (uint64_t)len * 8;
    size_t i, rest;
    for (i = 0; i + 64 <= len; i += 64)
        sha1_block(h, data + i);
    rest = len - i;
    memset(block, 0, sizeof block);
    if (rest)
        memcpy(block, data + i, rest);
    block[rest] = 0x80;
    if (rest >= 56) {
        sha1_block(h, block);
        memset(block, 0, sizeof block);
    }
    for (i = 0; i < 8; i++)
        block[63 - i] = (uint8_t)(bits >> (8 * i));
    sha1_block(h, block);
    for (i = 0; i < 20; i++)
        snprintf(out + 2 * i, 3, "%02x", (unsigned)(h[i / 4] >> (24 - 8 * (i % 4))) & 0xFFu);
}

/* Whether the handle tests that read a freed handle's tag may run: not under valgrind or
 * ASan, which rightly report that read (the Makefile sets KEYROUTE_TEST_UNDER_CHECKER). */
static inline int may_touch_freed(void)
{
    const char *v = getenv("KEYROUTE_TEST_UNDER_CHECKER");
    return !(v && *v);
}

#endif
