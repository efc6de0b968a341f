/*
 * C tests of libkeyroute: every shared vector (ring, slot, pool; converted to lines by
 * vectors_to_lines.py) and every error status.
 *
 *   test_keyroute VECTORS.txt
 *
 * Builds as C99 (-std=c99 -Wall -Wextra -Werror -pedantic) and as C++.
 */
#include "testing.h"

/* ---- vectors ------------------------------------------------------------------------ */

static long ring_files, ring_keys, replica_keys, slot_cases, pool_seqs, pool_ops;

typedef struct {
    char **keys;
    size_t *lens;
    size_t *expect_index;
    size_t n, cap;
} key_batch;

static void batch_push(key_batch *b, char *key, size_t len, size_t idx)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 64;
        b->keys = (char **)realloc(b->keys, b->cap * sizeof *b->keys);
        b->lens = (size_t *)realloc(b->lens, b->cap * sizeof *b->lens);
        b->expect_index = (size_t *)realloc(b->expect_index, b->cap * sizeof *b->expect_index);
        if (!b->keys || !b->lens || !b->expect_index)
            exit(2);
    }
    b->keys[b->n] = key;
    b->lens[b->n] = len;
    b->expect_index[b->n] = idx;
    b->n++;
}

static void batch_check_and_clear(keyroute_ring *ring, key_batch *b)
{
    size_t *got = (size_t *)xmalloc(b->n * sizeof *got), i;
    ST(keyroute_ring_get_many(ring, (const uint8_t *const *)b->keys, b->lens, b->n, got),
       KEYROUTE_OK);
    for (i = 0; i < b->n; i++) {
        CHECKD(got[i] == b->expect_index[i], "get_many");
        free(b->keys[i]);
    }
    free(got);
    b->n = 0;
}

static size_t node_index_of(keyroute_ring *ring, const char *name, size_t len)
{
    size_t i, n = keyroute_ring_len(ring);
    for (i = 0; i < n; i++) {
        const char *nm;
        size_t nl;
        if (keyroute_ring_node(ring, i, &nm, &nl, NULL) == KEYROUTE_OK && same(nm, nl, name, len))
            return i;
    }
    return SIZE_MAX;
}

static void run_vectors(const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL, *fields[4096];
    size_t cap = 0, nf;
    keyroute_ring *ring = NULL;
    keyroute_pool *pool = NULL;
    long want_points = -1;
    size_t replicas_n = 0;
    char ctx[200] = "";
    key_batch batch;
    const uint8_t **slot_keys = NULL;
    size_t *slot_lens = NULL;
    uint16_t *slot_want = NULL;
    size_t slot_n = 0, slot_cap = 0;

    memset(&batch, 0, sizeof batch);
    if (!f) {
        perror(path);
        exit(2);
    }
    while (read_line(f, &line, &cap)) {
        nf = split(line, fields, sizeof fields / sizeof fields[0]);
        if (nf == 0)
            continue;
        if (strcmp(fields[0], "ring") == 0 && nf == 8) {
            keyroute_ring_options o;
            memset(&o, 0, sizeof o);
            o.vnodes = (uint32_t)atol(fields[3]);
            o.points_per_digest = (uint32_t)atol(fields[4]);
            o.default_port = (int32_t)atol(fields[5]);
            want_points = atol(fields[6]);
            replicas_n = (size_t)atol(fields[7]);
            snprintf(ctx, sizeof ctx, "%s", fields[1]);
            ring = NULL;
            ST(keyroute_ring_new(fields[2], &o, &ring), KEYROUTE_OK);
            ring_files++;
        } else if (strcmp(fields[0], "node") == 0 && ring) {
            char *name = unhex(fields[1], NULL);
            CHECKD(keyroute_ring_add(ring, name, atol(fields[2])) == KEYROUTE_OK, ctx);
            free(name);
        } else if (strcmp(fields[0], "key") == 0 && ring) {
            size_t klen, elen, got_len = 0, idx = SIZE_MAX;
            char *key = unhex(fields[1], &klen), *exp = unhex(fields[2], &elen);
            const char *got = NULL;
            if (want_points >= 0) {
                CHECKD(keyroute_ring_point_count(ring) == (size_t)want_points, ctx);
                want_points = -1;
            }
            CHECKD(keyroute_ring_get(ring, (const uint8_t *)key, klen, &got, &got_len) ==
                       KEYROUTE_OK &&
                       same(got, got_len, exp, elen) && strlen(got) == got_len,
                   ctx);
            CHECKD(keyroute_ring_get_index(ring, (const uint8_t *)key, klen, &idx) ==
                       KEYROUTE_OK &&
                       idx == node_index_of(ring, exp, elen),
                   ctx);
            ring_keys++;
            if (nf >= 4 && replicas_n > 0) {
                const char **names = (const char **)xmalloc(replicas_n * sizeof *names);
                size_t *lens = (size_t *)xmalloc(replicas_n * sizeof *lens), count = 0, j;
                char *rest = fields[3];
                ST(keyroute_ring_get_n(ring, (const uint8_t *)key, klen, replicas_n, names, lens,
                                       &count),
                   KEYROUTE_OK);
                for (j = 0; j < count; j++) {
                    char *comma = strchr(rest, ',');
                    size_t rl;
                    char *r;
                    if (comma)
                        *comma = '\0';
                    r = unhex(rest, &rl);
                    CHECKD(same(names[j], lens[j], r, rl), ctx);
                    free(r);
                    rest = comma ? comma + 1 : rest + strlen(rest);
                }
                CHECKD(*rest == '\0', ctx); /* as many replicas as the peer gave */
                replica_keys++;
                free(names);
                free(lens);
            }
            batch_push(&batch, key, klen, node_index_of(ring, exp, elen));
            free(exp);
        } else if (strcmp(fields[0], "end") == 0 && ring) {
            batch_check_and_clear(ring, &batch);
            keyroute_ring_free(ring);
            ring = NULL;
        } else if (strcmp(fields[0], "slot") == 0) {
            size_t klen;
            char *key = unhex(fields[1], &klen);
            uint16_t want = (uint16_t)atol(fields[2]);
            CHECKD(keyroute_key_slot((const uint8_t *)key, klen) == want, fields[1]);
            if (slot_n == slot_cap) {
                slot_cap = slot_cap ? slot_cap * 2 : 256;
                slot_keys = (const uint8_t **)realloc((void *)slot_keys, slot_cap * sizeof *slot_keys);
                slot_lens = (size_t *)realloc(slot_lens, slot_cap * sizeof *slot_lens);
                slot_want = (uint16_t *)realloc(slot_want, slot_cap * sizeof *slot_want);
                if (!slot_keys || !slot_lens || !slot_want)
                    exit(2);
            }
            slot_keys[slot_n] = (const uint8_t *)key;
            slot_lens[slot_n] = klen;
            slot_want[slot_n] = want;
            slot_n++;
            slot_cases++;
        } else if (strcmp(fields[0], "pool") == 0) {
            snprintf(ctx, sizeof ctx, "pool %s", fields[1]);
            pool = NULL;
            ST(keyroute_pool_new(&pool), KEYROUTE_OK);
            pool_seqs++;
        } else if (strcmp(fields[0], "seed") == 0 && pool) {
            size_t added = 0;
            members ms = members_unhex(fields + 4, nf - 4);
            keyroute_status st = keyroute_pool_seed(pool, ms.ptrs, ms.lens, ms.n,
                strtoull(fields[1], NULL, 10), atoi(fields[2]), &added);
            if (strcmp(fields[3], "ERR") == 0)
                CHECKD(st == KEYROUTE_BAD_COUNT, ctx);
            else
                CHECKD(st == KEYROUTE_OK && added == (size_t)atol(fields[3]), ctx);
            members_free(ms);
            pool_ops++;
        } else if (strcmp(fields[0], "pick") == 0 && pool) {
            const uint8_t *got = NULL;
            size_t gl = 0;
            keyroute_status st = keyroute_pool_pick(pool, &got, &gl);
            if (strcmp(fields[1], "NIL") == 0) {
                CHECKD(st == KEYROUTE_EMPTY, ctx);
            } else {
                size_t wl;
                char *w = unhex(fields[1], &wl);
                CHECKD(st == KEYROUTE_OK && same((const char *)got, gl, w, wl), ctx);
                free(w);
            }
            pool_ops++;
        } else if (strcmp(fields[0], "remove") == 0 && pool) {
            size_t ml;
            char *m = unhex(fields[1], &ml);
            uint64_t c = 0;
            keyroute_status st = keyroute_pool_remove(pool, (const uint8_t *)m, ml, &c);
            if (strcmp(fields[2], "NIL") == 0)
                CHECKD(st == KEYROUTE_UNKNOWN_NODE, ctx);
            else
                CHECKD(st == KEYROUTE_OK && c == strtoull(fields[2], NULL, 10), ctx);
            free(m);
            pool_ops++;
        } else if (strcmp(fields[0], "restore") == 0 && pool) {
            size_t ml;
            char *m = unhex(fields[1], &ml);
            uint64_t c = 0;
            int mode = strcmp(fields[2], "keep") == 0 ? KEYROUTE_RESTORE_KEEP
                                                       : KEYROUTE_RESTORE_AT_MINIMUM;
            CHECKD(keyroute_pool_restore(pool, (const uint8_t *)m, ml, mode, &c) == KEYROUTE_OK &&
                       c == strtoull(fields[3], NULL, 10),
                   ctx);
            free(m);
            pool_ops++;
        } else if (strcmp(fields[0], "state") == 0 && pool) {
            CHECKD(keyroute_pool_len(pool) == (size_t)atol(fields[1]), ctx);
        } else if ((strcmp(fields[0], "count") == 0 || strcmp(fields[0], "removed") == 0) &&
                   pool) {
            size_t ml;
            char *m = unhex(fields[1], &ml);
            uint64_t c = 0;
            keyroute_status st = fields[0][0] == 'c'
                                     ? keyroute_pool_count(pool, (const uint8_t *)m, ml, &c)
                                     : keyroute_pool_removed_count(pool, (const uint8_t *)m, ml, &c);
            CHECKD(st == KEYROUTE_OK && c == strtoull(fields[2], NULL, 10), ctx);
            free(m);
        } else if (strcmp(fields[0], "endpool") == 0 && pool) {
            keyroute_pool_free(pool);
            pool = NULL;
        } else {
            CHECKD(0, fields[0]);
        }
    }
    if (slot_n) {
        uint16_t *got = (uint16_t *)xmalloc(slot_n * sizeof *got);
        size_t i;
        ST(keyroute_key_slots(slot_keys, slot_lens, slot_n, got), KEYROUTE_OK);
        for (i = 0; i < slot_n; i++) {
            CHECK(got[i] == slot_want[i]);
            free((void *)slot_keys[i]);
        }
        free(got);
    }
    free((void *)slot_keys);
    free(slot_lens);
    free(slot_want);
    free(batch.keys);
    free(batch.lens);
    free(batch.expect_index);
    free(line);
    keyroute_ring_free(ring);
    keyroute_pool_free(pool);
    fclose(f);
}

/* ---- statuses and API edges --------------------------------------------------------- */

static void test_library(void)
{
    int s;
    const char *seen[100];
    size_t n = 0, i;
    CHECK(strcmp(keyroute_version(), KEYROUTE_VERSION_STRING) == 0);
    CHECK(KEYROUTE_VERSION_MAJOR >= 0 && KEYROUTE_VERSION_MINOR >= 0 && KEYROUTE_VERSION_PATCH >= 0);
    CHECK(KEYROUTE_OK == 0);
    for (s = 0; s < 100; s++) {
        const char *d = keyroute_status_str(s);
        CHECK(d != NULL);
        if (strcmp(d, "unknown status") != 0)
            seen[n++] = d;
    }
    CHECK(n == 21); /* OK .. BAD_REDIRECT, REDIS, BUFFER_TOO_SMALL, BAD_KEY, PANIC */
    for (i = 0; i + 1 < n; i++)
        CHECK(strcmp(seen[i], seen[i + 1]) != 0);
    CHECK(strcmp(keyroute_status_str(-1), "unknown status") == 0);
    CHECK(strcmp(keyroute_status_str(KEYROUTE_PANIC), "unknown status") != 0);
}

static void test_slots(void)
{
    const uint8_t *keys[3];
    size_t lens[3];
    uint16_t out[3] = {0, 0, 0};
    size_t off = 99, len = 99;

    /* docs/design.md facts */
    CHECK(keyroute_key_slot(B("123456789"), 9) == (0x31C3 & 16383));
    CHECK(keyroute_key_slot(B("{}{a}"), 5) == 13650);
    CHECK(keyroute_key_slot(B("{{a}}"), 5) == 10276);
    CHECK(keyroute_key_slot(B("foo{}{bar}"), 10) == 8363);
    CHECK(keyroute_key_slot(B("foo{bar}{zap}"), 13) == 5061);
    CHECK(keyroute_key_slot(B(""), 0) == 0);
    CHECK(keyroute_key_slot(NULL, 0) == 0);
    CHECK(keyroute_key_slot(NULL, 3) == KEYROUTE_NO_SLOT);
    CHECK(KEYROUTE_SLOT_COUNT == 16384);

    keys[0] = B("foo");
    lens[0] = 3;
    keys[1] = NULL;
    lens[1] = 0;
    keys[2] = B("{foo}.x");
    lens[2] = 7;
    ST(keyroute_key_slots(keys, lens, 3, out), KEYROUTE_OK);
    CHECK(out[0] == 12182 && out[1] == 0 && out[2] == 12182);
    ST(keyroute_key_slots(NULL, NULL, 0, NULL), KEYROUTE_OK);
    ST(keyroute_key_slots(NULL, lens, 3, out), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_key_slots(keys, NULL, 3, out), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_key_slots(keys, lens, 3, NULL), KEYROUTE_NULL_ARGUMENT);
    lens[1] = 2; /* NULL key with a length */
    out[0] = 1;
    ST(keyroute_key_slots(keys, lens, 3, out), KEYROUTE_NULL_ARGUMENT);
    CHECK(out[0] == 1); /* nothing written */

    ST(keyroute_hash_tag(B("x{user:1}y"), 10, &off, &len), KEYROUTE_OK);
    CHECK(off == 2 && len == 6);
    ST(keyroute_hash_tag(B("foo{}{bar}"), 10, &off, &len), KEYROUTE_OK);
    CHECK(off == 0 && len == 10);
    ST(keyroute_hash_tag(NULL, 0, &off, &len), KEYROUTE_OK);
    CHECK(off == 0 && len == 0);
    ST(keyroute_hash_tag(NULL, 1, &off, &len), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_hash_tag(B("a"), 1, NULL, &len), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_hash_tag(B("a"), 1, &off, NULL), KEYROUTE_NULL_ARGUMENT);
}

static void test_ring_errors(void)
{
    keyroute_ring *r = NULL, *sentinel = (keyroute_ring *)&r;
    keyroute_ring_options o;
    const char *name = NULL, *names[4];
    size_t len = 0, count = 7, idx = 0, lens[4];
    uint32_t w = 0;

    /* keyroute_ring_new */
    ST(keyroute_ring_new("libketama", NULL, NULL), KEYROUTE_NULL_ARGUMENT);
    r = sentinel;
    ST(keyroute_ring_new(NULL, NULL, &r), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_new("nope", NULL, &r), KEYROUTE_UNKNOWN_PROFILE);
    ST(keyroute_ring_new("", NULL, &r), KEYROUTE_UNKNOWN_PROFILE);
    ST(keyroute_ring_new("lib\xff", NULL, &r), KEYROUTE_INVALID_UTF8);
    memset(&o, 0, sizeof o);
    o.vnodes = 65537;
    ST(keyroute_ring_new("native", &o, &r), KEYROUTE_BAD_OPTION);
    memset(&o, 0, sizeof o);
    o.points_per_digest = 5;
    ST(keyroute_ring_new("libketama", &o, &r), KEYROUTE_BAD_OPTION);
    o.points_per_digest = 256 + 3; /* must not wrap to 3 */
    ST(keyroute_ring_new("libketama", &o, &r), KEYROUTE_BAD_OPTION);
    o.points_per_digest = 3;
    ST(keyroute_ring_new("native", &o, &r), KEYROUTE_BAD_OPTION);
    memset(&o, 0, sizeof o);
    o.default_port = 65536;
    ST(keyroute_ring_new("node-hashring", &o, &r), KEYROUTE_BAD_OPTION);
    o.default_port = -2;
    ST(keyroute_ring_new("node-hashring", &o, &r), KEYROUTE_BAD_OPTION);
    CHECK(r == sentinel); /* untouched on error */
    ST(keyroute_ring_new("NODE_HASHRING", NULL, &r), KEYROUTE_OK);
    CHECK(strcmp(keyroute_ring_profile(r), "node-hashring") == 0);
    keyroute_ring_free(r);
    CHECK(keyroute_ring_profile(NULL) == NULL);

    /* docs/design.md facts: 320 points, "test" on 127.0.0.1:11211 */
    ST(keyroute_ring_new("libketama", NULL, &r), KEYROUTE_OK);
    ST(keyroute_ring_get(r, B("test"), 4, &name, &len), KEYROUTE_EMPTY);
    ST(keyroute_ring_get_index(r, B("test"), 4, &idx), KEYROUTE_EMPTY);
    ST(keyroute_ring_get_n(r, B("test"), 4, 2, names, lens, &count), KEYROUTE_EMPTY);
    CHECK(count == 0);
    ST(keyroute_ring_add(r, "127.0.0.1:11211", 600), KEYROUTE_OK);
    ST(keyroute_ring_add(r, "127.0.0.1:11212", 400), KEYROUTE_OK);
    CHECK(keyroute_ring_len(r) == 2 && keyroute_ring_point_count(r) == 320);
    ST(keyroute_ring_get(r, B("test"), 4, &name, &len), KEYROUTE_OK);
    CHECK(strcmp(name, "127.0.0.1:11211") == 0 && len == 15);
    ST(keyroute_ring_get(r, B("test"), 4, &name, NULL), KEYROUTE_OK);
    ST(keyroute_ring_get(r, NULL, 0, &name, &len), KEYROUTE_OK);

    /* add */
    ST(keyroute_ring_add(NULL, "a", 1), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_add(r, NULL, 1), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_add(r, "", 1), KEYROUTE_EMPTY_NAME);
    ST(keyroute_ring_add(r, "bad\xc3", 1), KEYROUTE_INVALID_UTF8);
    ST(keyroute_ring_add(r, "a", 0), KEYROUTE_BAD_WEIGHT);
    ST(keyroute_ring_add(r, "a", -1), KEYROUTE_BAD_WEIGHT);
    ST(keyroute_ring_add(r, "a", (int64_t)UINT32_MAX + 1), KEYROUTE_BAD_WEIGHT);
    ST(keyroute_ring_add(r, "127.0.0.1:11211", 5), KEYROUTE_DUPLICATE_NODE);
    CHECK(keyroute_ring_len(r) == 2 && keyroute_ring_point_count(r) == 320);
    /* failed calls leave handed-out names valid (valgrind/ASan would flag a stale read) */
    ST(keyroute_ring_get(r, B("test"), 4, &name, &len), KEYROUTE_OK);
    ST(keyroute_ring_remove(r, "zz"), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_ring_add(r, "127.0.0.1:11212", 1), KEYROUTE_DUPLICATE_NODE);
    CHECK(strcmp(name, "127.0.0.1:11211") == 0);

    /* remove / set_weight */
    ST(keyroute_ring_remove(NULL, "a"), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_remove(r, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_remove(r, "\xff"), KEYROUTE_INVALID_UTF8);
    ST(keyroute_ring_remove(r, "zz"), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_ring_set_weight(NULL, "a", 1), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_set_weight(r, NULL, 1), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_set_weight(r, "\xff", 1), KEYROUTE_INVALID_UTF8);
    ST(keyroute_ring_set_weight(r, "zz", 1), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_ring_set_weight(r, "127.0.0.1:11211", 0), KEYROUTE_BAD_WEIGHT);
    ST(keyroute_ring_set_weight(r, "127.0.0.1:11211", -5), KEYROUTE_BAD_WEIGHT);
    CHECK(keyroute_ring_len(r) == 2 && keyroute_ring_point_count(r) == 320);
    ST(keyroute_ring_set_weight(r, "127.0.0.1:11211", 400), KEYROUTE_OK);
    ST(keyroute_ring_node(r, 0, &name, &len, &w), KEYROUTE_OK);
    CHECK(w == 400 && strcmp(name, "127.0.0.1:11211") == 0);
    ST(keyroute_ring_node(r, 2, &name, &len, &w), KEYROUTE_OUT_OF_RANGE);
    ST(keyroute_ring_node(r, SIZE_MAX, &name, &len, &w), KEYROUTE_OUT_OF_RANGE);
    ST(keyroute_ring_node(r, 0, NULL, &len, &w), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_node(NULL, 0, &name, &len, &w), KEYROUTE_NULL_ARGUMENT);

    /* lookups */
    ST(keyroute_ring_get(NULL, B("k"), 1, &name, &len), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get(r, NULL, 1, &name, &len), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get(r, B("k"), 1, NULL, &len), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get_index(r, B("k"), 1, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get_index(r, NULL, 1, &idx), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get_n(r, B("k"), 1, 2, NULL, lens, &count), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get_n(r, B("k"), 1, 2, names, lens, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get_n(r, B("k"), 1, 0, NULL, NULL, &count), KEYROUTE_OK);
    CHECK(count == 0);
    ST(keyroute_ring_get_n(r, B("k"), 1, 4, names, NULL, &count), KEYROUTE_OK);
    CHECK(count == 2 && strcmp(names[0], names[1]) != 0);
    ST(keyroute_ring_get(r, B("k"), 1, &name, &len), KEYROUTE_OK);
    CHECK(strcmp(name, names[0]) == 0);
    ST(keyroute_ring_get_many(NULL, NULL, NULL, 0, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get_many(r, NULL, NULL, 0, NULL), KEYROUTE_OK);
    ST(keyroute_ring_get_many(r, NULL, lens, 1, &idx), KEYROUTE_NULL_ARGUMENT);
    CHECK(keyroute_ring_len(NULL) == 0 && keyroute_ring_point_count(NULL) == 0);

    /* removing every node empties the ring again */
    ST(keyroute_ring_remove(r, "127.0.0.1:11211"), KEYROUTE_OK);
    ST(keyroute_ring_get(r, B("test"), 4, &name, &len), KEYROUTE_OK);
    CHECK(strcmp(name, "127.0.0.1:11212") == 0);
    ST(keyroute_ring_remove(r, "127.0.0.1:11212"), KEYROUTE_OK);
    ST(keyroute_ring_get(r, B("test"), 4, &name, &len), KEYROUTE_EMPTY);
    {
        const uint8_t *k = B("x");
        size_t kl = 1, out = 0;
        ST(keyroute_ring_get_many(r, &k, &kl, 1, &out), KEYROUTE_OK);
        CHECK(out == SIZE_MAX);
    }
    keyroute_ring_free(r);
    keyroute_ring_free(NULL);

    /* too many points: the ring is unchanged */
    ST(keyroute_ring_new("native", NULL, &r), KEYROUTE_OK);
    ST(keyroute_ring_add(r, "a", 1), KEYROUTE_OK);
    ST(keyroute_ring_add(r, "b", (int64_t)UINT32_MAX), KEYROUTE_TOO_MANY_POINTS);
    ST(keyroute_ring_set_weight(r, "a", (int64_t)UINT32_MAX), KEYROUTE_TOO_MANY_POINTS);
    CHECK(keyroute_ring_len(r) == 1 && keyroute_ring_point_count(r) == 160);
    keyroute_ring_free(r);
}

static void test_pool_errors(void)
{
    keyroute_pool *p = NULL;
    const uint8_t *m = NULL, *members[2];
    size_t ml = 0, lens[2], added = 9;
    uint64_t c = 0;

    ST(keyroute_pool_new(NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_new(&p), KEYROUTE_OK);
    ST(keyroute_pool_pick(p, &m, &ml), KEYROUTE_EMPTY);
    ST(keyroute_pool_pick(NULL, &m, &ml), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_pick(p, NULL, &ml), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_pick(p, &m, NULL), KEYROUTE_NULL_ARGUMENT);
    members[0] = B("proxy-b");
    lens[0] = 7;
    members[1] = B("proxy-a");
    lens[1] = 7;
    ST(keyroute_pool_seed(p, members, lens, 2, ((uint64_t)1 << 53) + 1, 0, &added),
       KEYROUTE_BAD_COUNT);
    CHECK(added == 9 && keyroute_pool_len(p) == 0);
    ST(keyroute_pool_seed(NULL, members, lens, 2, 0, 0, &added), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_seed(p, NULL, lens, 2, 0, 0, &added), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_seed(p, NULL, NULL, 0, 0, 0, NULL), KEYROUTE_OK);
    ST(keyroute_pool_seed(p, members, lens, 2, 0, 0, &added), KEYROUTE_OK);
    CHECK(added == 2 && keyroute_pool_len(p) == 2);
    ST(keyroute_pool_pick(p, &m, &ml), KEYROUTE_OK);
    CHECK(ml == 7 && memcmp(m, "proxy-a", 7) == 0);
    ST(keyroute_pool_count(p, B("proxy-a"), 7, &c), KEYROUTE_OK);
    CHECK(c == 1);
    ST(keyroute_pool_count(p, B("nope"), 4, &c), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_pool_count(p, B("nope"), 4, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_remove(p, B("nope"), 4, &c), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_pool_remove(p, NULL, 4, &c), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_remove(p, B("proxy-a"), 7, &c), KEYROUTE_OK);
    CHECK(c == 1);
    ST(keyroute_pool_removed_count(p, B("proxy-a"), 7, &c), KEYROUTE_OK);
    ST(keyroute_pool_removed_count(p, B("proxy-b"), 7, &c), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_pool_restore(p, B("proxy-a"), 7, 7, &c), KEYROUTE_BAD_OPTION);
    ST(keyroute_pool_restore(NULL, B("proxy-a"), 7, KEYROUTE_RESTORE_KEEP, &c),
       KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_restore(p, B("proxy-a"), 7, KEYROUTE_RESTORE_AT_MINIMUM, &c), KEYROUTE_OK);
    CHECK(c == 0 && keyroute_pool_len(p) == 2);
    CHECK(keyroute_pool_len(NULL) == 0);
    keyroute_pool_free(p);
    keyroute_pool_free(NULL);
}

static void test_slot_map(void)
{
    keyroute_slot_map *m = NULL;
    keyroute_redirect r;
    size_t a = 99, b = 99, rep = 99, idx = 0;
    uint16_t slot = 0, port = 0;
    const char *id = NULL, *host = NULL;
    int32_t is_master = -1;
    const char *moved = "MOVED 42 :7001";

    ST(keyroute_slot_map_new(NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_new(&m), KEYROUTE_OK);
    CHECK(keyroute_slot_map_len(m) == 0 && keyroute_slot_map_is_complete(m) == 0);
    ST(keyroute_slot_map_add_master(m, "a", "10.0.0.1", 7000, &a), KEYROUTE_OK);
    ST(keyroute_slot_map_add_master(m, "b", "10.0.0.2", 7000, &b), KEYROUTE_OK);
    CHECK(a == 0 && b == 1);
    ST(keyroute_slot_map_add_master(m, "a", "10.0.0.3", 7000, NULL), KEYROUTE_DUPLICATE_NODE);
    ST(keyroute_slot_map_add_master(m, NULL, "h", 1, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_add_master(m, "c", NULL, 1, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_add_master(m, "\xff", "h", 1, NULL), KEYROUTE_INVALID_UTF8);
    ST(keyroute_slot_map_add_master(NULL, "c", "h", 1, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_add_replica(m, a, "a1", "10.0.0.11", 7000, &rep), KEYROUTE_OK);
    ST(keyroute_slot_map_add_replica(m, rep, "x", "h", 1, NULL), KEYROUTE_NOT_A_MASTER);
    ST(keyroute_slot_map_add_replica(m, 77, "x", "h", 1, NULL), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_slot_map_owner_of_key(m, B("foo"), 3, &idx, &slot), KEYROUTE_EMPTY);
    ST(keyroute_slot_map_assign(m, 0, 8191, a), KEYROUTE_OK);
    ST(keyroute_slot_map_assign(m, 8192, 16383, b), KEYROUTE_OK);
    ST(keyroute_slot_map_assign(m, 10, 5, a), KEYROUTE_BAD_RANGE);
    ST(keyroute_slot_map_assign(m, 0, 16384, a), KEYROUTE_BAD_RANGE);
    ST(keyroute_slot_map_assign(m, 0, 1, rep), KEYROUTE_NOT_A_MASTER);
    ST(keyroute_slot_map_assign(m, 0, 1, 42), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_slot_map_assign(NULL, 0, 1, a), KEYROUTE_NULL_ARGUMENT);
    CHECK(keyroute_slot_map_is_complete(m) == 1 && keyroute_slot_map_slot_count(m, a) == 8192);
    CHECK(keyroute_slot_map_len(m) == 3 && keyroute_slot_map_slot_count(m, 42) == 0);
    ST(keyroute_slot_map_owner_of_key(m, B("foo"), 3, &idx, &slot), KEYROUTE_OK);
    CHECK(idx == b && slot == 12182);
    ST(keyroute_slot_map_owner_of_key(m, NULL, 3, &idx, &slot), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_owner_of_key(m, B("foo"), 3, NULL, &slot), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_owner(m, 100, &idx), KEYROUTE_OK);
    CHECK(idx == a);
    ST(keyroute_slot_map_owner(m, 16384, &idx), KEYROUTE_BAD_RANGE);
    ST(keyroute_slot_map_owner(m, 1, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_unassign(m, 0, 0), KEYROUTE_OK);
    ST(keyroute_slot_map_unassign(m, 1, 0), KEYROUTE_BAD_RANGE);
    ST(keyroute_slot_map_owner(m, 0, &idx), KEYROUTE_EMPTY);
    CHECK(keyroute_slot_map_is_complete(m) == 0);
    ST(keyroute_slot_map_node(m, rep, &id, &host, &port, &is_master, &idx), KEYROUTE_OK);
    CHECK(strcmp(id, "a1") == 0 && strcmp(host, "10.0.0.11") == 0 && port == 7000 &&
          is_master == 0 && idx == a);
    ST(keyroute_slot_map_node(m, a, NULL, NULL, NULL, &is_master, &idx), KEYROUTE_OK);
    CHECK(is_master == 1 && idx == SIZE_MAX);
    ST(keyroute_slot_map_node(m, 3, &id, NULL, NULL, NULL, NULL), KEYROUTE_OUT_OF_RANGE);

    /* redirections */
    ST(keyroute_slot_map_apply_redirect(m, B(moved), strlen(moved), "10.0.0.1", &r), KEYROUTE_OK);
    CHECK(r.moved == 1 && r.slot == 42 && r.port == 7001 && r.added == 1 && r.node == 3);
    CHECK(r.host_len == 8 && memcmp(r.host, "10.0.0.1", 8) == 0);
    ST(keyroute_slot_map_owner(m, 42, &idx), KEYROUTE_OK);
    CHECK(idx == 3 && keyroute_slot_map_len(m) == 4);
    ST(keyroute_slot_map_node(m, 3, &id, &host, &port, NULL, NULL), KEYROUTE_OK);
    CHECK(strcmp(id, "") == 0 && strcmp(host, "10.0.0.1") == 0 && port == 7001);
    ST(keyroute_slot_map_apply_redirect(m, B("-ASK 43 10.0.0.2:7000\r\n"), 23, NULL, &r),
       KEYROUTE_OK);
    CHECK(r.moved == 0 && r.slot == 43 && r.node == b && r.added == 0);
    ST(keyroute_slot_map_owner(m, 43, &idx), KEYROUTE_OK);
    CHECK(idx == a); /* ASK never changes the map */
    ST(keyroute_slot_map_apply_redirect(m, B("ERR wrong"), 9, NULL, &r), KEYROUTE_NOT_A_REDIRECT);
    ST(keyroute_slot_map_apply_redirect(m, B("MOVED 16384 h:1"), 15, NULL, &r),
       KEYROUTE_BAD_REDIRECT);
    ST(keyroute_slot_map_apply_redirect(m, B("MOVED 1 h:1"), 11, "\xff", &r), KEYROUTE_INVALID_UTF8);
    ST(keyroute_slot_map_apply_redirect(m, B("MOVED 1 h:1"), 11, NULL, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_apply_redirect(NULL, B("MOVED 1 h:1"), 11, NULL, &r),
       KEYROUTE_NULL_ARGUMENT);
    keyroute_slot_map_free(m);
    keyroute_slot_map_free(NULL);

    ST(keyroute_redirect_parse(B("MOVED 1 2001:db8::5:7000"), 24, NULL, &r), KEYROUTE_OK);
    CHECK(r.moved == 1 && r.slot == 1 && r.port == 7000 && r.node == SIZE_MAX);
    CHECK(r.host_len == 11 && memcmp(r.host, "2001:db8::5", 11) == 0);
    ST(keyroute_redirect_parse(B("ASK 5 :7001"), 11, "10.1.1.1", &r), KEYROUTE_OK);
    CHECK(r.moved == 0 && r.host_len == 8 && memcmp(r.host, "10.1.1.1", 8) == 0);
    ST(keyroute_redirect_parse(B("MOVED 5"), 7, NULL, &r), KEYROUTE_BAD_REDIRECT);
    ST(keyroute_redirect_parse(B("MOVED 5 \xff:1"), 10, NULL, &r), KEYROUTE_INVALID_UTF8);
    ST(keyroute_redirect_parse(B("OOM"), 3, NULL, &r), KEYROUTE_NOT_A_REDIRECT);
    ST(keyroute_redirect_parse(NULL, 3, NULL, &r), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_redirect_parse(B("OOM"), 3, NULL, NULL), KEYROUTE_NULL_ARGUMENT);
}

int main(int argc, char **argv)
{
    test_library();
    test_slots();
    test_ring_errors();
    test_pool_errors();
    test_slot_map();
    if (argc > 1)
        run_vectors(argv[1]);
    printf("keyroute C tests (%s): %ld checks, %ld failed; vectors: %ld ring files, %ld keys "
           "(%ld with replicas), %ld slot cases, %ld pool sequences (%ld ops)\n",
           keyroute_version(), checks, failures, ring_files, ring_keys, replica_keys,
           slot_cases, pool_seqs, pool_ops);
    if (argc > 1 && (ring_files == 0 || slot_cases == 0)) {
        fputs("no vectors read\n", stderr);
        return 1;
    }
    return failures ? 1 : 0;
}
