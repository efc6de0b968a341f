/*
 * C tests of libkeyroute: every shared vector (ring, slot, pool; converted to lines by
 * vectors_to_lines.py), every status with its name and message, and the C-only edges the
 * contract table cannot express (NULL pointers, SIZE_MAX counts, handles of the wrong
 * kind or freed), diffs, plans and scripts.
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

/* The keys of `b` back to back, for the _packed calls: the bytes (returned) and the end of
 * each key in ends[i]. */
static uint8_t *pack(char **keys, const size_t *lens, size_t n, uint32_t *ends)
{
    size_t i, total = 0;
    uint8_t *data;
    for (i = 0; i < n; i++)
        total += lens[i];
    data = (uint8_t *)xmalloc(total + 1);
    for (i = 0, total = 0; i < n; i++) {
        memcpy(data + total, keys[i], lens[i]);
        total += lens[i];
        ends[i] = (uint32_t)total;
    }
    return data;
}

static void batch_check_and_clear(keyroute_ring *ring, key_batch *b)
{
    size_t *got = (size_t *)xmalloc(b->n * sizeof *got), i;
    uint32_t *ends = (uint32_t *)xmalloc(b->n * sizeof *ends);
    uint32_t *packed = (uint32_t *)xmalloc(b->n * sizeof *packed);
    uint8_t *data = pack(b->keys, b->lens, b->n, ends);
    ST(keyroute_ring_get_many(ring, (const uint8_t *const *)b->keys, b->lens, b->n, got),
       KEYROUTE_OK);
    ST(keyroute_ring_get_many_packed(ring, data, b->n ? ends[b->n - 1] : 0, ends, b->n, packed),
       KEYROUTE_OK);
    for (i = 0; i < b->n; i++) {
        CHECKD(got[i] == b->expect_index[i], "get_many");
        CHECKD(packed[i] == b->expect_index[i], "get_many_packed");
        free(b->keys[i]);
    }
    free(got);
    free(ends);
    free(packed);
    free(data);
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
            o.vnodes = atol(fields[3]);
            o.points_per_digest = atol(fields[4]);
            o.default_port = atol(fields[5]);
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
            ST(keyroute_ring_free(ring), KEYROUTE_OK);
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
            if (fields[3][0] >= 'A' && fields[3][0] <= 'Z') /* refused: its code */
                CHECKD(strcmp(keyroute_status_name((int32_t)st), fields[3]) == 0, ctx);
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
            keyroute_status st = keyroute_pool_restore(pool, (const uint8_t *)m, ml, mode, &c);
            if (fields[3][0] >= 'A' && fields[3][0] <= 'Z')
                CHECKD(strcmp(keyroute_status_name((int32_t)st), fields[3]) == 0, ctx);
            else
                CHECKD(st == KEYROUTE_OK && c == strtoull(fields[3], NULL, 10), ctx);
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
            ST(keyroute_pool_free(pool), KEYROUTE_OK);
            pool = NULL;
        } else {
            CHECKD(0, fields[0]);
        }
    }
    if (slot_n) {
        uint16_t *got = (uint16_t *)xmalloc(slot_n * sizeof *got);
        size_t i;
        uint16_t *packed = (uint16_t *)xmalloc(slot_n * sizeof *packed);
        uint32_t *ends = (uint32_t *)xmalloc(slot_n * sizeof *ends);
        uint8_t *data = pack((char **)slot_keys, slot_lens, slot_n, ends);
        ST(keyroute_key_slots(slot_keys, slot_lens, slot_n, got), KEYROUTE_OK);
        ST(keyroute_key_slots_packed(data, ends[slot_n - 1], ends, slot_n, packed), KEYROUTE_OK);
        for (i = 0; i < slot_n; i++) {
            CHECK(got[i] == slot_want[i]);
            CHECK(packed[i] == slot_want[i]);
            free((void *)slot_keys[i]);
        }
        free(got);
        free(packed);
        free(ends);
        free(data);
    }
    free((void *)slot_keys);
    free(slot_lens);
    free(slot_want);
    free(batch.keys);
    free(batch.lens);
    free(batch.expect_index);
    free(line);
    ST(keyroute_ring_free(ring), KEYROUTE_OK);
    ST(keyroute_pool_free(pool), KEYROUTE_OK);
    fclose(f);
}

/* ---- statuses and API edges --------------------------------------------------------- */

/* Every status of the header with the name the library gives it: the C side of the Rust
 * test that every ErrorCode has its status (a code added to the core without its status
 * here fails the count below). */
#define S(name) {KEYROUTE_##name, #name}
static const struct {
    keyroute_status status;
    const char *name;
} statuses[] = {
    S(OK), S(EMPTY), S(NULL_ARGUMENT), S(BAD_UTF8), S(BAD_TYPE), S(OUT_OF_RANGE), S(TOO_LARGE),
    S(BUFFER_TOO_SMALL), S(INVALID_HANDLE), S(INTERNAL), S(EMPTY_NODE_NAME), S(ZERO_WEIGHT),
    S(NEGATIVE_WEIGHT), S(WEIGHT_TOO_LARGE), S(BAD_WEIGHT), S(DUPLICATE_NODE), S(UNKNOWN_NODE),
    S(UNKNOWN_PROFILE), S(TOO_MANY_POINTS), S(BAD_VNODES), S(BAD_POINTS_PER_DIGEST),
    S(BAD_OPTION), S(INCOMPATIBLE_RINGS), S(BAD_NODE_SPEC), S(AMBIGUOUS_NODE_SPEC), S(BAD_PORT),
    S(BAD_SLOT), S(BAD_RANGE), S(BAD_ADDRESS), S(NOT_A_MASTER), S(INCONSISTENT_TOPOLOGY),
    S(TOO_MANY_NODES), S(NOT_A_REDIRECT), S(BAD_REDIRECT), S(BAD_PLAN), S(STALE_PLAN),
    S(BAD_POOL_KEY), S(BAD_COUNT), S(BAD_RESTORE_MODE), S(EMPTY_MEMBER), S(BAD_TTL),
    S(REDIS_BAD_URL), S(REDIS_CONNECT), S(REDIS_AUTH), S(REDIS_TIMEOUT),
    S(REDIS_CONNECTION_LOST), S(REDIS_WRONGTYPE), S(REDIS_SERVER), S(REDIS_PROTOCOL),
    S(CLUSTER_NO_OWNER), S(CLUSTER_RETRIES_EXHAUSTED), S(CLUSTER_UNREACHABLE), S(BUSY),
    S(REDIS_READONLY), S(REDIS_TLS),
    S(CACHE_TIMEOUT), S(BACKEND_ERROR), S(SESSION_EXPIRED), S(VERSION_MISMATCH), S(NOT_FOUND),
    S(VALUE_TOO_LARGE), S(BAD_CLIENT_ID), S(BAD_KIND), S(BAD_DEVICE_ID), S(BAD_SESSION_ID),
    S(BAD_VERSION), S(SESSION_CLIENT_MISMATCH), S(BAD_CONFIG), S(UNSUPPORTED_CONFIG),
};
#undef S

static void test_library(void)
{
    int s;
    size_t n = 0, i, j, count = sizeof statuses / sizeof statuses[0];
    CHECK(strcmp(keyroute_version(), KEYROUTE_VERSION_STRING) == 0);
    CHECK(KEYROUTE_VERSION_MAJOR >= 0 && KEYROUTE_VERSION_MINOR >= 0 && KEYROUTE_VERSION_PATCH >= 0);
    CHECK(KEYROUTE_OK == 0 && KEYROUTE_EMPTY == 1 && KEYROUTE_NULL_ARGUMENT == 2);
    CHECK(KEYROUTE_ZERO_WEIGHT == 11 && KEYROUTE_BAD_TTL == 54 && KEYROUTE_REDIS_AUTH == 62);
    for (s = -5; s < 1000; s++) {
        const char *name = keyroute_status_name(s), *text = keyroute_status_str(s);
        CHECK(name != NULL && text != NULL);
        if (strcmp(name, "UNKNOWN") != 0) {
            n++;
            CHECK(strcmp(text, "unknown status") != 0 && text[0] != '\0');
        } else {
            CHECK(strcmp(text, "unknown status") == 0);
        }
    }
    CHECKD(n == count, "the library has as many statuses as this test lists");
    for (i = 0; i < count; i++) {
        CHECKD(strcmp(keyroute_status_name((int32_t)statuses[i].status), statuses[i].name) == 0,
               statuses[i].name);
        for (j = i + 1; j < count; j++)
            CHECK(statuses[i].status != statuses[j].status &&
                  strcmp(keyroute_status_str((int32_t)statuses[i].status),
                         keyroute_status_str((int32_t)statuses[j].status)) != 0);
    }
    CHECK(strcmp(keyroute_status_str(KEYROUTE_OK), "ok") == 0);
    CHECK(strstr(keyroute_status_str(KEYROUTE_UNKNOWN_NODE), "not on the ring") != NULL);
    CHECK(keyroute_last_error_message() != NULL);
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
    CHECK(strstr(keyroute_last_error_message(), "`key` is NULL") != NULL);
    CHECK(keyroute_key_slot(B("x"), SIZE_MAX) == KEYROUTE_NO_SLOT); /* no such object */
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
    /* counts no arrays can hold: refused before anything is read */
    STM(keyroute_key_slots(keys, lens, SIZE_MAX, out), KEYROUTE_TOO_LARGE, "limit");
    ST(keyroute_key_slots(keys, lens, (size_t)KEYROUTE_MAX_BATCH + 1, out), KEYROUTE_TOO_LARGE);
    lens[1] = 2; /* NULL key with a length */
    out[0] = 1;
    STM(keyroute_key_slots(keys, lens, 3, out), KEYROUTE_NULL_ARGUMENT, "keys[1]");
    CHECK(out[0] == 1); /* nothing written */

    ST(keyroute_hash_tag(B("x{user:1}y"), 10, &off, &len), KEYROUTE_OK);
    CHECK(off == 2 && len == 6);
    ST(keyroute_hash_tag(B("foo{}{bar}"), 10, &off, &len), KEYROUTE_OK);
    CHECK(off == 0 && len == 10);
    ST(keyroute_hash_tag(NULL, 0, &off, &len), KEYROUTE_OK);
    CHECK(off == 0 && len == 0);
    ST(keyroute_hash_tag(NULL, 1, &off, &len), KEYROUTE_NULL_ARGUMENT);
    STM(keyroute_hash_tag(B("a"), 1, NULL, &len), KEYROUTE_NULL_ARGUMENT, "offset_out");
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
    STM(keyroute_ring_new(NULL, NULL, &r), KEYROUTE_NULL_ARGUMENT, "`profile` is NULL");
    STM(keyroute_ring_new("nope", NULL, &r), KEYROUTE_UNKNOWN_PROFILE, "\"nope\"");
    ST(keyroute_ring_new("", NULL, &r), KEYROUTE_UNKNOWN_PROFILE);
    ST(keyroute_ring_new("lib\xff", NULL, &r), KEYROUTE_BAD_UTF8);
    memset(&o, 0, sizeof o);
    o.vnodes = 65537;
    STM(keyroute_ring_new("native", &o, &r), KEYROUTE_BAD_VNODES, "65537");
    o.vnodes = ((int64_t)1 << 32) + 160; /* never wraps to 160 */
    ST(keyroute_ring_new("native", &o, &r), KEYROUTE_BAD_VNODES);
    o.vnodes = -1;
    ST(keyroute_ring_new("native", &o, &r), KEYROUTE_BAD_VNODES);
    memset(&o, 0, sizeof o);
    o.points_per_digest = 5;
    ST(keyroute_ring_new("libketama", &o, &r), KEYROUTE_BAD_POINTS_PER_DIGEST);
    o.points_per_digest = 256 + 3; /* must not wrap to 3 */
    STM(keyroute_ring_new("libketama", &o, &r), KEYROUTE_BAD_POINTS_PER_DIGEST, "259");
    o.points_per_digest = 3;
    ST(keyroute_ring_new("native", &o, &r), KEYROUTE_BAD_OPTION);
    memset(&o, 0, sizeof o);
    o.default_port = 65536;
    ST(keyroute_ring_new("node-hashring", &o, &r), KEYROUTE_BAD_PORT);
    o.default_port = -2;
    ST(keyroute_ring_new("node-hashring", &o, &r), KEYROUTE_BAD_PORT);
    o.default_port = 11211;
    STM(keyroute_ring_new("native", &o, &r), KEYROUTE_BAD_OPTION, "native");
    CHECK(r == sentinel); /* untouched on error */
    ST(keyroute_ring_new("NODE_HASHRING", NULL, &r), KEYROUTE_OK);
    CHECK(strcmp(keyroute_ring_profile(r), "node-hashring") == 0);
    ST(keyroute_ring_free(r), KEYROUTE_OK);
    /* "twemproxy", the old name of the libmemcached ring, still builds it */
    ST(keyroute_ring_new("twemproxy", NULL, &r), KEYROUTE_OK);
    CHECK(strcmp(keyroute_ring_profile(r), "libmemcached") == 0);
    ST(keyroute_ring_free(r), KEYROUTE_OK);
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
    STM(keyroute_ring_add(NULL, "a", 1), KEYROUTE_NULL_ARGUMENT, "`ring` is NULL");
    STM(keyroute_ring_add(r, NULL, 1), KEYROUTE_NULL_ARGUMENT, "`name` is NULL");
    STM(keyroute_ring_add(r, "", 1), KEYROUTE_EMPTY_NODE_NAME, "empty");
    STM(keyroute_ring_add(r, "bad\xc3", 1), KEYROUTE_BAD_UTF8, "offset 3");
    STM(keyroute_ring_add(r, "a", 0), KEYROUTE_ZERO_WEIGHT, "\"a\" has weight 0");
    STM(keyroute_ring_add(r, "a", -1), KEYROUTE_NEGATIVE_WEIGHT, "-1");
    STM(keyroute_ring_add(r, "a", INT64_MIN), KEYROUTE_NEGATIVE_WEIGHT, "-9223372036854775808");
    STM(keyroute_ring_add(r, "a", (int64_t)UINT32_MAX + 1), KEYROUTE_WEIGHT_TOO_LARGE,
        "4294967296");
    STM(keyroute_ring_add(r, "127.0.0.1:11211", 5), KEYROUTE_DUPLICATE_NODE, "already");
    CHECK(keyroute_ring_len(r) == 2 && keyroute_ring_point_count(r) == 320);
    /* failed calls leave handed-out names valid (valgrind/ASan would flag a stale read) */
    ST(keyroute_ring_get(r, B("test"), 4, &name, &len), KEYROUTE_OK);
    ST(keyroute_ring_remove(r, "zz"), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_ring_add(r, "127.0.0.1:11212", 1), KEYROUTE_DUPLICATE_NODE);
    CHECK(strcmp(name, "127.0.0.1:11211") == 0);

    /* remove / set_weight */
    ST(keyroute_ring_remove(NULL, "a"), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_remove(r, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_remove(r, "\xff"), KEYROUTE_BAD_UTF8);
    STM(keyroute_ring_remove(r, "zz"), KEYROUTE_UNKNOWN_NODE, "\"zz\" is not on the ring");
    ST(keyroute_ring_set_weight(NULL, "a", 1), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_set_weight(r, NULL, 1), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_set_weight(r, "\xff", 1), KEYROUTE_BAD_UTF8);
    ST(keyroute_ring_set_weight(r, "zz", 1), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_ring_set_weight(r, "127.0.0.1:11211", 0), KEYROUTE_ZERO_WEIGHT);
    ST(keyroute_ring_set_weight(r, "127.0.0.1:11211", -5), KEYROUTE_NEGATIVE_WEIGHT);
    CHECK(keyroute_ring_len(r) == 2 && keyroute_ring_point_count(r) == 320);
    ST(keyroute_ring_set_weight(r, "127.0.0.1:11211", 400), KEYROUTE_OK);
    ST(keyroute_ring_node(r, 0, &name, &len, &w), KEYROUTE_OK);
    CHECK(w == 400 && strcmp(name, "127.0.0.1:11211") == 0);
    STM(keyroute_ring_node(r, 2, &name, &len, &w), KEYROUTE_OUT_OF_RANGE, "2");
    ST(keyroute_ring_node(r, SIZE_MAX, &name, &len, &w), KEYROUTE_OUT_OF_RANGE);
    ST(keyroute_ring_node(r, 0, NULL, &len, &w), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_node(NULL, 0, &name, &len, &w), KEYROUTE_NULL_ARGUMENT);

    /* lookups */
    ST(keyroute_ring_get(NULL, B("k"), 1, &name, &len), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get(r, NULL, 1, &name, &len), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get(r, B("k"), 1, NULL, &len), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get(r, B("k"), SIZE_MAX, &name, &len), KEYROUTE_TOO_LARGE);
    ST(keyroute_ring_get_index(r, B("k"), 1, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get_index(r, NULL, 1, &idx), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get_n(r, B("k"), 1, 2, NULL, lens, &count), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get_n(r, B("k"), 1, 2, names, lens, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get_n(r, B("k"), 1, 0, NULL, NULL, &count), KEYROUTE_OK);
    CHECK(count == 0);
    ST(keyroute_ring_get_n(r, B("k"), 1, 4, names, NULL, &count), KEYROUTE_OK);
    CHECK(count == 2 && strcmp(names[0], names[1]) != 0);
    /* n = SIZE_MAX (the contract's "n = 2^32" case): never more than the ring holds */
    count = 0;
    ST(keyroute_ring_get_n(r, B("k"), 1, SIZE_MAX, names, lens, &count), KEYROUTE_OK);
    CHECK(count == 2);
    ST(keyroute_ring_get(r, B("k"), 1, &name, &len), KEYROUTE_OK);
    CHECK(strcmp(name, names[0]) == 0);
    ST(keyroute_ring_get_many(NULL, NULL, NULL, 0, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_get_many(r, NULL, NULL, 0, NULL), KEYROUTE_OK);
    ST(keyroute_ring_get_many(r, NULL, lens, 1, &idx), KEYROUTE_NULL_ARGUMENT);
    {
        const uint8_t *k = B("x");
        size_t kl = 1, one = 0;
        ST(keyroute_ring_get_many(r, &k, &kl, SIZE_MAX, &one), KEYROUTE_TOO_LARGE);
        ST(keyroute_ring_get_many(r, &k, &kl, SIZE_MAX / 8, &one), KEYROUTE_TOO_LARGE);
        ST(keyroute_ring_get_many(r, &k, &kl, 1, NULL), KEYROUTE_NULL_ARGUMENT);
        kl = SIZE_MAX; /* a key no object can be */
        ST(keyroute_ring_get_many(r, &k, &kl, 1, &one), KEYROUTE_TOO_LARGE);
    }
    {
        /* the packed batch: "x", "", "yz"; ends that go down or past the bytes are refused */
        const uint8_t *data = B("xyz");
        uint32_t ends[] = {1, 1, 3}, bad[] = {2, 1, 3}, past[] = {1, 1, 4}, out[3] = {0};
        uint16_t slots[3] = {0};
        ST(keyroute_ring_get_many_packed(r, data, 3, ends, 3, out), KEYROUTE_OK);
        CHECK(out[0] < 2 && out[1] < 2 && out[2] < 2);
        ST(keyroute_ring_get_index(r, B("yz"), 2, &idx), KEYROUTE_OK);
        CHECK(out[2] == idx);
        STM(keyroute_ring_get_many_packed(r, data, 3, bad, 3, out), KEYROUTE_OUT_OF_RANGE,
            "ends");
        ST(keyroute_ring_get_many_packed(r, data, 3, past, 3, out), KEYROUTE_OUT_OF_RANGE);
        ST(keyroute_ring_get_many_packed(r, NULL, 0, NULL, 0, NULL), KEYROUTE_OK);
        ST(keyroute_ring_get_many_packed(r, NULL, 3, ends, 3, out), KEYROUTE_NULL_ARGUMENT);
        ST(keyroute_ring_get_many_packed(r, data, 3, NULL, 3, out), KEYROUTE_NULL_ARGUMENT);
        ST(keyroute_ring_get_many_packed(r, data, 3, ends, 3, NULL), KEYROUTE_NULL_ARGUMENT);
        ST(keyroute_ring_get_many_packed(r, data, 3, ends, SIZE_MAX, out), KEYROUTE_TOO_LARGE);
        ST(keyroute_ring_get_many_packed(r, data, SIZE_MAX, ends, 3, out), KEYROUTE_TOO_LARGE);
        ST(keyroute_ring_get_many_packed(NULL, data, 3, ends, 3, out), KEYROUTE_NULL_ARGUMENT);
        ST(keyroute_key_slots_packed(data, 3, ends, 3, slots), KEYROUTE_OK);
        CHECK(slots[0] == keyroute_key_slot(B("x"), 1) && slots[1] == 0 &&
              slots[2] == keyroute_key_slot(B("yz"), 2));
        ST(keyroute_key_slots_packed(data, 3, bad, 3, slots), KEYROUTE_OUT_OF_RANGE);
        ST(keyroute_key_slots_packed(data, 3, ends, 3, NULL), KEYROUTE_NULL_ARGUMENT);
        ST(keyroute_key_slots_packed(NULL, 0, NULL, 0, NULL), KEYROUTE_OK);
    }
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
        uint32_t end = 1, packed = 0;
        ST(keyroute_ring_get_many(r, &k, &kl, 1, &out), KEYROUTE_OK);
        CHECK(out == SIZE_MAX);
        ST(keyroute_ring_get_many_packed(r, k, 1, &end, 1, &packed), KEYROUTE_OK);
        CHECK(packed == KEYROUTE_NO_NODE);
    }
    ST(keyroute_ring_free(r), KEYROUTE_OK);
    ST(keyroute_ring_free(NULL), KEYROUTE_OK);

    /* too many points: the ring is unchanged */
    ST(keyroute_ring_new("native", NULL, &r), KEYROUTE_OK);
    ST(keyroute_ring_add(r, "a", 1), KEYROUTE_OK);
    STM(keyroute_ring_add(r, "b", (int64_t)UINT32_MAX), KEYROUTE_TOO_MANY_POINTS, "points");
    ST(keyroute_ring_set_weight(r, "a", (int64_t)UINT32_MAX), KEYROUTE_TOO_MANY_POINTS);
    CHECK(keyroute_ring_len(r) == 1 && keyroute_ring_point_count(r) == 160);
    ST(keyroute_ring_free(r), KEYROUTE_OK);
}

static void test_from_spec(void)
{
    keyroute_ring *r = NULL, *sentinel = (keyroute_ring *)&r;
    const char *name = NULL;
    size_t len = 0;
    uint32_t w = 0;

    ST(keyroute_ring_from_spec("libketama", NULL, "10.0.0.1:11211, 10.0.0.2:11211=3\n# x\n", &r),
       KEYROUTE_OK);
    CHECK(keyroute_ring_len(r) == 2);
    ST(keyroute_ring_node(r, 0, &name, &len, &w), KEYROUTE_OK);
    CHECK(strcmp(name, "10.0.0.1:11211") == 0 && w == 1);
    ST(keyroute_ring_node(r, 1, &name, &len, &w), KEYROUTE_OK);
    CHECK(strcmp(name, "10.0.0.2:11211") == 0 && w == 3);
    {
        double shares[2] = {0, 0};
        size_t n = 0;
        ST(keyroute_ring_shares(r, shares, 2, &n), KEYROUTE_OK);
        CHECK(n == 2 && shares[1] > 2 * shares[0] && shares[0] + shares[1] > 0.999999 &&
              shares[0] + shares[1] < 1.000001);
        shares[0] = -1;
        ST(keyroute_ring_shares(r, shares, 1, &n), KEYROUTE_BUFFER_TOO_SMALL);
        CHECK(n == 2 && shares[0] == -1);
        ST(keyroute_ring_shares(r, NULL, 0, &n), KEYROUTE_BUFFER_TOO_SMALL);
        ST(keyroute_ring_shares(r, shares, 2, NULL), KEYROUTE_NULL_ARGUMENT);
    }
    ST(keyroute_ring_free(r), KEYROUTE_OK);
    r = sentinel;
    STM(keyroute_ring_from_spec("native", NULL, "cache-a:2", &r), KEYROUTE_AMBIGUOUS_NODE_SPEC,
        "cache-a=2");
    ST(keyroute_ring_from_spec("native", NULL, "a,a", &r), KEYROUTE_DUPLICATE_NODE);
    ST(keyroute_ring_from_spec("native", NULL, "", &r), KEYROUTE_BAD_NODE_SPEC);
    ST(keyroute_ring_from_spec("native", NULL, NULL, &r), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_from_spec("nope", NULL, "a", &r), KEYROUTE_UNKNOWN_PROFILE);
    ST(keyroute_ring_from_spec("native", NULL, "a", NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_from_spec("native", NULL, "\xff", &r), KEYROUTE_BAD_UTF8);
    CHECK(r == sentinel);
}

static void test_diff(void)
{
    keyroute_ring *a = NULL, *b = NULL, *k = NULL;
    keyroute_diff *d = NULL, *sentinel = (keyroute_diff *)&d;
    size_t i, n;
    uint64_t start = 1, end = 0, prev_end = 0;
    const char *from = NULL, *to = NULL;
    double moved, ideal;

    ST(keyroute_ring_from_spec("native", NULL, "a,b,c", &a), KEYROUTE_OK);
    ST(keyroute_ring_from_spec("native", NULL, "a,b,c,d", &b), KEYROUTE_OK);
    ST(keyroute_ring_diff(a, b, &d), KEYROUTE_OK);
    moved = keyroute_diff_moved_fraction(d);
    ideal = keyroute_diff_ideal_fraction(d);
    n = keyroute_diff_len(d);
    /* Adding one node of four moves about a quarter of the keys, all to it: exactly the
     * ideal (only what the new node gains). */
    CHECK(moved > 0.15 && moved < 0.35 && moved - ideal < 1e-12 && ideal - moved < 1e-12);
    CHECK(n > 0);
    for (i = 0; i < n; i++) {
        ST(keyroute_diff_arc(d, i, &start, &end, &from, &to), KEYROUTE_OK);
        CHECK(start <= end && (i == 0 || start > prev_end));
        CHECK(from != NULL && strcmp(from, "d") != 0 && to != NULL && strcmp(to, "d") == 0);
        prev_end = end;
    }
    STM(keyroute_diff_arc(d, n, &start, &end, &from, &to), KEYROUTE_OUT_OF_RANGE, "arc");
    ST(keyroute_diff_arc(d, 0, NULL, NULL, NULL, NULL), KEYROUTE_OK);
    ST(keyroute_diff_free(d), KEYROUTE_OK);
    /* the same ring: nothing moves */
    ST(keyroute_ring_diff(a, a, &d), KEYROUTE_OK);
    CHECK(keyroute_diff_len(d) == 0 && keyroute_diff_moved_fraction(d) == 0.0);
    ST(keyroute_diff_free(d), KEYROUTE_OK);
    /* an empty old ring: every arc comes from nobody */
    ST(keyroute_ring_new("native", NULL, &k), KEYROUTE_OK);
    ST(keyroute_ring_diff(k, a, &d), KEYROUTE_OK);
    CHECK(keyroute_diff_moved_fraction(d) == 1.0);
    ST(keyroute_diff_arc(d, 0, NULL, NULL, &from, &to), KEYROUTE_OK);
    CHECK(from == NULL && to != NULL);
    ST(keyroute_diff_free(d), KEYROUTE_OK);
    ST(keyroute_ring_free(k), KEYROUTE_OK);
    /* other hash: incompatible */
    ST(keyroute_ring_from_spec("libketama", NULL, "a,b,c", &k), KEYROUTE_OK);
    d = sentinel;
    STM(keyroute_ring_diff(a, k, &d), KEYROUTE_INCOMPATIBLE_RINGS, "hash keys differently");
    CHECK(d == sentinel);
    ST(keyroute_ring_diff(NULL, a, &d), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_diff(a, NULL, &d), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_ring_diff(a, b, NULL), KEYROUTE_NULL_ARGUMENT);
    CHECK(keyroute_diff_len(NULL) == 0 && keyroute_diff_moved_fraction(NULL) == 0.0);
    ST(keyroute_diff_free(NULL), KEYROUTE_OK);
    ST(keyroute_ring_free(a), KEYROUTE_OK);
    ST(keyroute_ring_free(b), KEYROUTE_OK);
    ST(keyroute_ring_free(k), KEYROUTE_OK);
}

static void test_pool_errors(void)
{
    keyroute_pool *p = NULL;
    const uint8_t *m = NULL, *members[2], *picks[8];
    size_t ml = 0, lens[2], added = 9, plens[8], count = 99, i;
    uint64_t c = 0;

    ST(keyroute_pool_new(NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_new(&p), KEYROUTE_OK);
    ST(keyroute_pool_pick(p, &m, &ml), KEYROUTE_EMPTY);
    ST(keyroute_pool_pick_many(p, 3, picks, plens, &count), KEYROUTE_EMPTY);
    CHECK(count == 0);
    ST(keyroute_pool_pick(NULL, &m, &ml), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_pick(p, NULL, &ml), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_pick(p, &m, NULL), KEYROUTE_NULL_ARGUMENT);
    members[0] = B("proxy-b");
    lens[0] = 7;
    members[1] = B("proxy-a");
    lens[1] = 7;
    STM(keyroute_pool_seed(p, members, lens, 2, ((uint64_t)1 << 53) + 1, 0, &added),
        KEYROUTE_BAD_COUNT, "9007199254740993");
    CHECK(added == 9 && keyroute_pool_len(p) == 0);
    ST(keyroute_pool_seed(NULL, members, lens, 2, 0, 0, &added), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_seed(p, NULL, lens, 2, 0, 0, &added), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_seed(p, members, lens, SIZE_MAX, 0, 0, &added), KEYROUTE_TOO_LARGE);
    ST(keyroute_pool_seed(p, NULL, NULL, 0, 0, 0, NULL), KEYROUTE_OK);
    /* an empty member: refused, nothing added */
    lens[1] = 0;
    STM(keyroute_pool_seed(p, members, lens, 2, 0, 0, &added), KEYROUTE_EMPTY_MEMBER, "empty");
    CHECK(added == 9 && keyroute_pool_len(p) == 0);
    lens[1] = 7;
    ST(keyroute_pool_seed(p, members, lens, 2, 0, 0, &added), KEYROUTE_OK);
    CHECK(added == 2 && keyroute_pool_len(p) == 2);
    ST(keyroute_pool_pick(p, &m, &ml), KEYROUTE_OK);
    CHECK(ml == 7 && memcmp(m, "proxy-a", 7) == 0);
    ST(keyroute_pool_count(p, B("proxy-a"), 7, &c), KEYROUTE_OK);
    CHECK(c == 1);
    /* not in the pool: the message speaks of the pool, not of a ring */
    STM(keyroute_pool_count(p, B("nope"), 4, &c), KEYROUTE_UNKNOWN_NODE, "not in the pool");
    CHECK(strstr(keyroute_last_error_message(), "ring") == NULL);
    ST(keyroute_pool_count(p, B("nope"), 4, NULL), KEYROUTE_NULL_ARGUMENT);
    STM(keyroute_pool_remove(p, B("nope"), 4, &c), KEYROUTE_UNKNOWN_NODE, "\"nope\"");
    CHECK(strstr(keyroute_last_error_message(), "ring") == NULL);
    ST(keyroute_pool_remove(p, NULL, 4, &c), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_remove(p, B("proxy-a"), 7, &c), KEYROUTE_OK);
    CHECK(c == 1);
    ST(keyroute_pool_removed_count(p, B("proxy-a"), 7, &c), KEYROUTE_OK);
    STM(keyroute_pool_removed_count(p, B("proxy-b"), 7, &c), KEYROUTE_UNKNOWN_NODE, "removed");
    /* a bad restore mode: its own code, and a message about restore modes */
    STM(keyroute_pool_restore(p, B("proxy-a"), 7, 7, &c), KEYROUTE_BAD_RESTORE_MODE, "restore mode");
    CHECK(strstr(keyroute_last_error_message(), "ring option") == NULL);
    ST(keyroute_pool_restore(p, B("proxy-a"), 7, -1, &c), KEYROUTE_BAD_RESTORE_MODE);
    ST(keyroute_pool_restore(NULL, B("proxy-a"), 7, KEYROUTE_RESTORE_KEEP, &c),
       KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_restore(p, NULL, 0, KEYROUTE_RESTORE_KEEP, &c), KEYROUTE_EMPTY_MEMBER);
    ST(keyroute_pool_restore(p, B("proxy-a"), 7, KEYROUTE_RESTORE_AT_MINIMUM, &c), KEYROUTE_OK);
    CHECK(c == 0 && keyroute_pool_len(p) == 2);

    /* pick_many: n picks as n picks, bounded per call */
    count = 99;
    STM(keyroute_pool_pick_many(p, ((size_t)1 << 24) + 1, picks, plens, &count),
        KEYROUTE_TOO_LARGE, "16777216");
    ST(keyroute_pool_pick_many(p, SIZE_MAX, NULL, NULL, &count), KEYROUTE_TOO_LARGE);
    CHECK(count == 99);
    ST(keyroute_pool_pick_many(p, 2, NULL, plens, &count), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_pick_many(p, 2, picks, plens, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_pool_pick_many(p, 0, NULL, NULL, &count), KEYROUTE_OK);
    CHECK(count == 0);
    /* counts: a 0 (restored at minimum), b 0 -> a b a b a b */
    ST(keyroute_pool_pick_many(p, 6, picks, plens, &count), KEYROUTE_OK);
    CHECK(count == 6);
    for (i = 0; i < count; i++)
        CHECK(plens[i] == 7 && memcmp(picks[i], i % 2 ? "proxy-b" : "proxy-a", 7) == 0);
    ST(keyroute_pool_count(p, B("proxy-b"), 7, &c), KEYROUTE_OK);
    CHECK(c == 3);
    CHECK(keyroute_pool_len(NULL) == 0);
    ST(keyroute_pool_free(p), KEYROUTE_OK);
    ST(keyroute_pool_free(NULL), KEYROUTE_OK);
}

static void test_side_key(void)
{
    uint8_t buf[64];
    size_t len = 0;
    ST(keyroute_side_key(B("{p}:pool"), 8, buf, sizeof buf, &len), KEYROUTE_OK);
    CHECK(len == 16 && memcmp(buf, "{p}:pool:removed", 16) == 0);
    len = 0;
    ST(keyroute_side_key(B("{p}:pool"), 8, buf, 3, &len), KEYROUTE_BUFFER_TOO_SMALL);
    CHECK(len == 16);
    ST(keyroute_side_key(B("{p}:pool"), 8, NULL, 0, &len), KEYROUTE_BUFFER_TOO_SMALL);
    STM(keyroute_side_key(B(""), 0, buf, sizeof buf, &len), KEYROUTE_BAD_POOL_KEY, "pool key");
    ST(keyroute_side_key(B("a}b"), 3, buf, sizeof buf, &len), KEYROUTE_BAD_POOL_KEY);
    ST(keyroute_side_key(B("{p}:pool"), 8, buf, sizeof buf, NULL), KEYROUTE_NULL_ARGUMENT);
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
    ST(keyroute_slot_map_add_master(m, "b", "[10.0.0.2]", 7000, &b), KEYROUTE_OK);
    CHECK(a == 0 && b == 1);
    STM(keyroute_slot_map_add_master(m, "a", "10.0.0.3", 7000, NULL), KEYROUTE_DUPLICATE_NODE,
        "\"a\"");
    ST(keyroute_slot_map_add_master(m, NULL, "h", 1, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_add_master(m, "c", NULL, 1, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_add_master(m, "\xff", "h", 1, NULL), KEYROUTE_BAD_UTF8);
    ST(keyroute_slot_map_add_master(NULL, "c", "h", 1, NULL), KEYROUTE_NULL_ARGUMENT);
    /* an address a node can have: non-empty host, port 1..=65535 (Address::checked) */
    STM(keyroute_slot_map_add_master(m, "c", "", 7000, NULL), KEYROUTE_BAD_ADDRESS, "empty host");
    STM(keyroute_slot_map_add_master(m, "c", "h", 0, NULL), KEYROUTE_BAD_PORT, "65535");
    ST(keyroute_slot_map_add_master(m, "c", "h", 65536, NULL), KEYROUTE_BAD_PORT);
    ST(keyroute_slot_map_add_master(m, "c", "h", -1, NULL), KEYROUTE_BAD_PORT);
    ST(keyroute_slot_map_add_master(m, "c", "[h", 1, NULL), KEYROUTE_BAD_ADDRESS);
    ST(keyroute_slot_map_add_replica(m, a, "c", "", 7000, NULL), KEYROUTE_BAD_ADDRESS);
    CHECK(keyroute_slot_map_len(m) == 2);
    ST(keyroute_slot_map_add_replica(m, a, "a1", "10.0.0.11", 7000, &rep), KEYROUTE_OK);
    STM(keyroute_slot_map_add_replica(m, rep, "x", "h", 1, NULL), KEYROUTE_NOT_A_MASTER, "replica");
    STM(keyroute_slot_map_add_replica(m, 77, "x", "h", 1, NULL), KEYROUTE_UNKNOWN_NODE, "77");
    ST(keyroute_slot_map_owner_of_key(m, B("foo"), 3, &idx, &slot), KEYROUTE_EMPTY);
    ST(keyroute_slot_map_assign(m, 0, 8191, a), KEYROUTE_OK);
    ST(keyroute_slot_map_assign(m, 8192, 16383, b), KEYROUTE_OK);
    STM(keyroute_slot_map_assign(m, 10, 5, a), KEYROUTE_BAD_RANGE, "10-5");
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
    STM(keyroute_slot_map_owner(m, 16384, &idx), KEYROUTE_BAD_SLOT, "16384");
    ST(keyroute_slot_map_owner(m, 1, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_unassign(m, 0, 0), KEYROUTE_OK);
    ST(keyroute_slot_map_unassign(m, 1, 0), KEYROUTE_BAD_RANGE);
    ST(keyroute_slot_map_owner(m, 0, &idx), KEYROUTE_EMPTY);
    CHECK(keyroute_slot_map_is_complete(m) == 0);
    ST(keyroute_slot_map_node(m, rep, &id, &host, &port, &is_master, &idx), KEYROUTE_OK);
    CHECK(strcmp(id, "a1") == 0 && strcmp(host, "10.0.0.11") == 0 && port == 7000 &&
          is_master == 0 && idx == a);
    ST(keyroute_slot_map_node(m, b, NULL, &host, NULL, NULL, NULL), KEYROUTE_OK);
    CHECK(strcmp(host, "10.0.0.2") == 0); /* brackets removed */
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
    ST(keyroute_slot_map_apply_redirect(m, B("MOVED 1 h:1"), 11, "\xff", &r), KEYROUTE_BAD_UTF8);
    ST(keyroute_slot_map_apply_redirect(m, B("MOVED 1 h:1"), 11, NULL, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_apply_redirect(NULL, B("MOVED 1 h:1"), 11, NULL, &r),
       KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_slot_map_free(m), KEYROUTE_OK);
    ST(keyroute_slot_map_free(NULL), KEYROUTE_OK);

    ST(keyroute_redirect_parse(B("MOVED 1 2001:db8::5:7000"), 24, NULL, &r), KEYROUTE_OK);
    CHECK(r.moved == 1 && r.slot == 1 && r.port == 7000 && r.node == SIZE_MAX);
    CHECK(r.host_len == 11 && memcmp(r.host, "2001:db8::5", 11) == 0);
    ST(keyroute_redirect_parse(B("ASK 5 :7001"), 11, "10.1.1.1", &r), KEYROUTE_OK);
    CHECK(r.moved == 0 && r.host_len == 8 && memcmp(r.host, "10.1.1.1", 8) == 0);
    ST(keyroute_redirect_parse(B("MOVED 5"), 7, NULL, &r), KEYROUTE_BAD_REDIRECT);
    /* text that must be UTF-8 and is not: BAD_UTF8, as everywhere */
    STM(keyroute_redirect_parse(B("MOVED 5 \xff:1"), 10, NULL, &r), KEYROUTE_BAD_UTF8, "UTF-8");
    STM(keyroute_redirect_parse(B("OOM"), 3, NULL, &r), KEYROUTE_NOT_A_REDIRECT, "MOVED");
    ST(keyroute_redirect_parse(NULL, 3, NULL, &r), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_redirect_parse(B("OOM"), 3, NULL, NULL), KEYROUTE_NULL_ARGUMENT);
}

static void test_plan(void)
{
    keyroute_slot_map *m = NULL, *other = NULL;
    keyroute_plan *p = NULL, *sentinel = (keyroute_plan *)&p;
    size_t a, b, c, rep, nodes[3], i, n, from, to, node, before, after, total = 0;
    size_t counts[3];
    uint64_t weights[3], w;
    uint16_t first, last;
    double ideal;

    ST(keyroute_slot_map_new(&m), KEYROUTE_OK);
    ST(keyroute_slot_map_add_master(m, "id-a", "10.0.0.1", 7000, &a), KEYROUTE_OK);
    ST(keyroute_slot_map_add_master(m, "id-b", "10.0.0.2", 7000, &b), KEYROUTE_OK);
    ST(keyroute_slot_map_add_master(m, "id-c", "10.0.0.3", 7000, &c), KEYROUTE_OK);
    ST(keyroute_slot_map_add_replica(m, a, "id-a1", "10.0.0.4", 7000, &rep), KEYROUTE_OK);
    ST(keyroute_slot_map_assign(m, 0, 8191, a), KEYROUTE_OK);
    ST(keyroute_slot_map_assign(m, 8192, 16383, b), KEYROUTE_OK);

    /* c is new: each gets a third, and only a third of the slots moves (core's example) */
    nodes[0] = a;
    nodes[1] = b;
    nodes[2] = c;
    weights[0] = weights[1] = weights[2] = 1;
    ST(keyroute_plan_new(m, nodes, weights, 3, &p), KEYROUTE_OK);
    CHECK(keyroute_plan_slots_moved(p) == 5461);
    n = keyroute_plan_len(p);
    CHECK(n > 0);
    for (i = 0; i < n; i++) {
        ST(keyroute_plan_move(p, i, &first, &last, &from, &to), KEYROUTE_OK);
        CHECK(first <= last && to == c && (from == a || from == b));
        total += (size_t)(last - first) + 1;
    }
    CHECK(total == 5461);
    STM(keyroute_plan_move(p, n, &first, &last, &from, &to), KEYROUTE_OUT_OF_RANGE, "move");
    CHECK(keyroute_plan_target_count(p) == 3);
    for (i = 0; i < 3; i++) {
        ST(keyroute_plan_target(p, i, &node, &w, &ideal, &before, &after), KEYROUTE_OK);
        CHECK(node == nodes[i] && w == 1 && ideal > 5461.0 && ideal < 5462.0);
        CHECK(before == (i < 2 ? 8192u : 0u) && (after == 5461 || after == 5462));
    }
    ST(keyroute_plan_target(p, 3, NULL, NULL, NULL, NULL, NULL), KEYROUTE_OUT_OF_RANGE);
    /* applied to another map: stale, nothing changes */
    ST(keyroute_slot_map_new(&other), KEYROUTE_OK);
    STM(keyroute_plan_apply(p, other), KEYROUTE_UNKNOWN_NODE, "not in");
    ST(keyroute_slot_map_add_master(other, "", "h", 1, NULL), KEYROUTE_OK);
    ST(keyroute_slot_map_add_master(other, "", "h", 2, NULL), KEYROUTE_OK);
    ST(keyroute_slot_map_add_master(other, "", "h", 3, NULL), KEYROUTE_OK);
    STM(keyroute_plan_apply(p, other), KEYROUTE_STALE_PLAN, "make a new plan");
    CHECK(keyroute_slot_map_slot_count(other, 2) == 0);
    ST(keyroute_slot_map_free(other), KEYROUTE_OK);
    ST(keyroute_plan_apply(p, m), KEYROUTE_OK);
    for (i = 0; i < 3; i++)
        counts[i] = keyroute_slot_map_slot_count(m, nodes[i]);
    CHECK(counts[0] + counts[1] + counts[2] == 16384);
    for (i = 0; i < 3; i++)
        CHECK(counts[i] == 5461 || counts[i] == 5462);
    ST(keyroute_plan_apply(p, m), KEYROUTE_STALE_PLAN); /* once only */
    ST(keyroute_plan_apply(NULL, m), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_plan_apply(p, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_plan_free(p), KEYROUTE_OK);

    /* already balanced: an empty plan */
    ST(keyroute_plan_new(m, nodes, weights, 3, &p), KEYROUTE_OK);
    CHECK(keyroute_plan_len(p) == 0 && keyroute_plan_slots_moved(p) == 0);
    ST(keyroute_plan_free(p), KEYROUTE_OK);

    /* weights as text: addresses or ids, 0 drains */
    ST(keyroute_plan_from_spec(m, "10.0.0.1:7000=0, id-b=1\n[10.0.0.3]:7000=1", &p), KEYROUTE_OK);
    CHECK(keyroute_plan_target_count(p) == 3);
    ST(keyroute_plan_target(p, 0, &node, &w, NULL, NULL, &after), KEYROUTE_OK);
    CHECK(node == a && w == 0 && after == 0);
    ST(keyroute_plan_apply(p, m), KEYROUTE_OK);
    CHECK(keyroute_slot_map_slot_count(m, a) == 0);
    ST(keyroute_plan_free(p), KEYROUTE_OK);

    /* refused plans: the code of the core's PlanError, nothing handed out */
    p = sentinel;
    STM(keyroute_plan_from_spec(m, "10.9.9.9:7000=1", &p), KEYROUTE_UNKNOWN_NODE, "10.9.9.9:7000");
    STM(keyroute_plan_from_spec(m, "a:1", &p), KEYROUTE_AMBIGUOUS_NODE_SPEC, "a=1");
    STM(keyroute_plan_from_spec(m, "id-b=0,id-c=0", &p), KEYROUTE_BAD_PLAN, "zero");
    STM(keyroute_plan_from_spec(m, "id-b=1", &p), KEYROUTE_BAD_PLAN, "no weight");
    ST(keyroute_plan_from_spec(m, "id-b=1,id-c=1,id-b=2", &p), KEYROUTE_BAD_PLAN);
    ST(keyroute_plan_from_spec(m, "id-b=1,id-c=1,id-a1=1", &p), KEYROUTE_NOT_A_MASTER);
    ST(keyroute_plan_from_spec(m, "id-b=-1", &p), KEYROUTE_NEGATIVE_WEIGHT);
    ST(keyroute_plan_from_spec(m, NULL, &p), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_plan_from_spec(NULL, "id-b=1", &p), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_plan_from_spec(m, "id-b=1", NULL), KEYROUTE_NULL_ARGUMENT);
    nodes[0] = 99;
    STM(keyroute_plan_new(m, nodes, weights, 3, &p), KEYROUTE_UNKNOWN_NODE, "99");
    nodes[0] = rep;
    ST(keyroute_plan_new(m, nodes, weights, 3, &p), KEYROUTE_NOT_A_MASTER);
    ST(keyroute_plan_new(m, NULL, weights, 3, &p), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_plan_new(m, nodes, NULL, 3, &p), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_plan_new(m, nodes, weights, SIZE_MAX, &p), KEYROUTE_TOO_LARGE);
    ST(keyroute_plan_new(m, NULL, NULL, 0, &p), KEYROUTE_BAD_PLAN);
    CHECK(p == sentinel);
    CHECK(keyroute_plan_len(NULL) == 0 && keyroute_plan_target_count(NULL) == 0);
    ST(keyroute_plan_free(NULL), KEYROUTE_OK);
    ST(keyroute_slot_map_free(m), KEYROUTE_OK);
}

static void test_scripts(void)
{
    keyroute_script_info s, t;
    size_t n = keyroute_script_count(), i, j;
    char sha[41];
    const char *names[] = {"least-used", "seed", "remove", "restore", "lease-acquire",
                           "lease-release", "lease-reclaim"};

    CHECK(n >= 7);
    for (i = 0; i < n; i++) {
        ST(keyroute_script_at(i, &s), KEYROUTE_OK);
        CHECK(s.name && s.summary && s.text && s.sha1 && s.num_keys >= 1);
        CHECK(strlen(s.text) == s.text_len && s.text_len > 0);
        sha1_hex(B(s.text), s.text_len, sha);
        CHECKD(strcmp(sha, s.sha1) == 0, s.name); /* the SHA1 EVALSHA takes */
        ST(keyroute_script(s.name, &t), KEYROUTE_OK);
        CHECK(t.text == s.text && t.sha1 == s.sha1);
        for (j = 0; j < i; j++) {
            keyroute_script_info u;
            ST(keyroute_script_at(j, &u), KEYROUTE_OK);
            CHECK(strcmp(u.name, s.name) != 0);
        }
    }
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECKD(keyroute_script(names[i], &s) == KEYROUTE_OK, names[i]);
    ST(keyroute_script("least_used", &s), KEYROUTE_OK);
    CHECK(strcmp(s.name, "least-used") == 0 && s.num_keys == 1);
    ST(keyroute_script("seed", &s), KEYROUTE_OK);
    CHECK(s.num_keys == 2);
    ST(keyroute_script("most-used", &s), KEYROUTE_EMPTY);
    STM(keyroute_script_at(n, &s), KEYROUTE_OUT_OF_RANGE, "script index");
    ST(keyroute_script_at(0, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_script(NULL, &s), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_script("seed", NULL), KEYROUTE_NULL_ARGUMENT);
}

/* Handles carry a type tag: a handle of another kind is refused (nothing freed, nothing
 * changed); a freed handle is refused while its memory is not reused. */
static void test_handles(void)
{
    keyroute_ring *r = NULL;
    keyroute_pool *p = NULL;
    keyroute_slot_map *m = NULL;
    keyroute_plan *plan = NULL;
    keyroute_diff *d = NULL;
    const char *name;
    size_t len;
    uint64_t w = 1;

    ST(keyroute_ring_from_spec("native", NULL, "a,b", &r), KEYROUTE_OK);
    ST(keyroute_pool_new(&p), KEYROUTE_OK);
    ST(keyroute_slot_map_new(&m), KEYROUTE_OK);

    /* the wrong kind: freeing a pool as a ring frees nothing */
    STM(keyroute_ring_free((keyroute_ring *)p), KEYROUTE_INVALID_HANDLE, "it is a keyroute_pool");
    STM(keyroute_pool_free((keyroute_pool *)r), KEYROUTE_INVALID_HANDLE, "keyroute_ring");
    STM(keyroute_ring_add((keyroute_ring *)m, "c", 1), KEYROUTE_INVALID_HANDLE,
        "`ring` is not a live keyroute_ring");
    ST(keyroute_ring_get((const keyroute_ring *)p, B("k"), 1, &name, &len), KEYROUTE_INVALID_HANDLE);
    ST(keyroute_slot_map_assign((keyroute_slot_map *)r, 0, 1, 0), KEYROUTE_INVALID_HANDLE);
    ST(keyroute_plan_new((const keyroute_slot_map *)p, NULL, NULL, 0, &plan),
       KEYROUTE_INVALID_HANDLE);
    ST(keyroute_ring_diff(r, (const keyroute_ring *)m, &d), KEYROUTE_INVALID_HANDLE);
    CHECK(keyroute_ring_len((const keyroute_ring *)p) == 0);
    CHECK(strstr(keyroute_last_error_message(), "keyroute_pool") != NULL);
    CHECK(keyroute_pool_len((const keyroute_pool *)m) == 0);
    CHECK(keyroute_ring_profile((const keyroute_ring *)m) == NULL);
    /* all three still work */
    CHECK(keyroute_ring_len(r) == 2 && keyroute_pool_len(p) == 0 && keyroute_slot_map_len(m) == 0);
    ST(keyroute_ring_get(r, B("k"), 1, &name, &len), KEYROUTE_OK);
    ST(keyroute_slot_map_add_master(m, "", "h", 1, NULL), KEYROUTE_OK);
    ST(keyroute_plan_new(m, NULL, &w, 0, &plan), KEYROUTE_BAD_PLAN);

    ST(keyroute_slot_map_free(m), KEYROUTE_OK);
    ST(keyroute_pool_free(p), KEYROUTE_OK);
    ST(keyroute_ring_free(r), KEYROUTE_OK);

    /* Freed: the tag was cleared. Reading it is a read of freed memory, which valgrind
     * and ASan report (rightly): those runs leave this part out. */
    if (may_touch_freed()) {
        STM(keyroute_ring_free(r), KEYROUTE_INVALID_HANDLE, "freed"); /* double free */
        ST(keyroute_ring_add(r, "c", 1), KEYROUTE_INVALID_HANDLE);
        CHECK(keyroute_ring_len(r) == 0);
        ST(keyroute_pool_free(p), KEYROUTE_INVALID_HANDLE);
        ST(keyroute_slot_map_free(m), KEYROUTE_INVALID_HANDLE);
    }
}

int main(int argc, char **argv)
{
    test_library();
    test_slots();
    test_ring_errors();
    test_from_spec();
    test_diff();
    test_pool_errors();
    test_side_key();
    test_slot_map();
    test_plan();
    test_scripts();
    test_handles();
    if (argc > 1)
        run_vectors(argv[1]);
    printf("keyroute C tests (%s): %ld checks, %ld failed; vectors: %ld ring files, %ld keys "
           "(%ld with replicas), %ld slot cases, %ld pool sequences (%ld ops)%s\n",
           keyroute_version(), checks, failures, ring_files, ring_keys, replica_keys,
           slot_cases, pool_seqs, pool_ops,
           may_touch_freed() ? "" : "; freed-handle checks left out under a memory checker");
    if (argc > 1 && (ring_files == 0 || slot_cases == 0 || pool_seqs == 0 || pool_ops == 0)) {
        fputs("no vectors read (ring, slot or pool)\n", stderr);
        return 1;
    }
    return failures ? 1 : 0;
}
