/*
 * Random pointer/length combinations against every export of libkeyroute (issue 18):
 * each iteration picks a call and draws each of its arguments from
 *
 *   handles   NULL, a live handle of the right kind, a live handle of every other kind,
 *             a misaligned pointer into a live handle;
 *   bytes     (NULL, 0), (buffer, 0..size), (NULL, n > 0), (buffer or NULL, a length no
 *             object can have: above PTRDIFF_MAX, SIZE_MAX);
 *   arrays    count 0, 1..capacity, or above the batch limit (2^24 + 1, 2^40, SIZE_MAX),
 *             with the arrays NULL or real, entries drawn as bytes;
 *   text      NULL, words the calls know, random bytes (invalid UTF-8 included), empty,
 *             4 KiB long;
 *   numbers   0, 1, -1, +-2^31, 2^32, 2^53, 2^63 - 1, -2^63, random small;
 *   out       NULL or real.
 *
 * Never a length larger than the memory behind a real pointer unless it is above a limit
 * the library states it checks first (C cannot tell a buffer's size; what the API promises
 * is that sizes above its limits are refused before anything is read), and never a freed
 * handle (test_keyroute.c checks those outside checkers). Redis handles are opened on the
 * throwaway redis-server of tests/with_redis.sh (KEYROUTE_TEST_REDIS_URL); other URLs are
 * only 127.0.0.1:1 (refused at once) or texts that are not URLs, so nothing leaves the
 * machine.
 *
 * Checked after every call: the status is one the header names, never KEYROUTE_INTERNAL
 * (a caught panic); an error status comes with a message; a call given an argument that
 * is certainly bad (a wrong or misaligned handle, NULL with a length, a size above the
 * limit, invalid UTF-8 in text) answers an error, and leaves every live handle as it was
 * (lengths, point counts, slot counts). Run under ASan/UBSan and valgrind by
 * `make test-c-fuzz`; a table of calls x statuses is printed at the end.
 *
 *   fuzz_api [ITERATIONS [SEED]]
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyroute.h"

/* ------------------------------------------------------------------------------------ */
/* Random numbers (xorshift64*), reproducible from the seed. */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}
static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }
static int one_in(unsigned n) { return below(n) == 0; }

/* ------------------------------------------------------------------------------------ */
/* Results: calls x statuses, failures. */

#define MAX_CALLS 128
#define MAX_STATUS 128
static long table[MAX_CALLS][MAX_STATUS];
static long failures, calls_made;
static const char *current;

static void fail(const char *what, int status)
{
    failures++;
    if (failures <= 40)
        fprintf(stderr, "FAIL %s: %s (status %d %s: %s)\n", current, what, status,
                keyroute_status_name(status), keyroute_last_error_message());
}

/* Whether the current draw holds an argument that is certainly bad. */
static int bad;

/* ------------------------------------------------------------------------------------ */
/* Handles. */

enum kind { K_RING, K_DIFF, K_POOL, K_MAP, K_PLAN, K_LU, K_LEASES, K_CACHE, K_SESS, K_DEV, K_COUNT };
static void *live[K_COUNT];
static const char *redis_url;
static const char *pool_key = "{fuzz}:pool";
static const char *lease_key = "{fuzz}:leases";

static int32_t loader_ok(void *ctx, const char *client, const char *kind, keyroute_load *load);

static void *make(int k)
{
    void *h = NULL;
    keyroute_status st = KEYROUTE_OK;
    switch (k) {
    case K_RING: {
        keyroute_ring *r = NULL;
        st = keyroute_ring_from_spec("native", NULL, "a,b=2,c", &r);
        h = r;
        break;
    }
    case K_DIFF: {
        keyroute_ring *a = NULL, *b = NULL;
        keyroute_diff *d = NULL;
        st = keyroute_ring_from_spec("native", NULL, "a,b", &a);
        if (st == KEYROUTE_OK)
            st = keyroute_ring_from_spec("native", NULL, "a,b,c", &b);
        if (st == KEYROUTE_OK)
            st = keyroute_ring_diff(a, b, &d);
        keyroute_ring_free(a);
        keyroute_ring_free(b);
        h = d;
        break;
    }
    case K_POOL: {
        keyroute_pool *p = NULL;
        const uint8_t *m[2] = {(const uint8_t *)"x", (const uint8_t *)"y"};
        size_t l[2] = {1, 1};
        st = keyroute_pool_new(&p);
        if (st == KEYROUTE_OK)
            st = keyroute_pool_seed(p, m, l, 2, 0, 0, NULL);
        h = p;
        break;
    }
    case K_MAP: {
        keyroute_slot_map *m = NULL;
        size_t a = 0, b = 0;
        st = keyroute_slot_map_new(&m);
        if (st == KEYROUTE_OK)
            st = keyroute_slot_map_add_master(m, "a", "10.0.0.1", 7000, &a);
        if (st == KEYROUTE_OK)
            st = keyroute_slot_map_add_master(m, "b", "10.0.0.2", 7000, &b);
        if (st == KEYROUTE_OK)
            st = keyroute_slot_map_assign(m, 0, 9000, a);
        if (st == KEYROUTE_OK)
            st = keyroute_slot_map_assign(m, 9001, 16383, b);
        h = m;
        break;
    }
    case K_PLAN: {
        /* From a map of its own: the live map changes shape as the calls go on. */
        keyroute_plan *p = NULL;
        keyroute_slot_map *m = make(K_MAP);
        st = keyroute_plan_from_spec(m, "a=1,b=1", &p);
        keyroute_slot_map_free(m);
        h = p;
        break;
    }
    case K_LU: {
        keyroute_least_used *lu = NULL;
        st = keyroute_least_used_open(redis_url, (const uint8_t *)pool_key, strlen(pool_key), 500,
                                      &lu);
        h = lu;
        break;
    }
    case K_LEASES: {
        keyroute_leases *l = NULL;
        st = keyroute_leases_open(redis_url, (const uint8_t *)lease_key, strlen(lease_key), 500,
                                  &l);
        h = l;
        break;
    }
    case K_CACHE: {
        keyroute_cache *c = NULL;
        keyroute_cache_options o;
        keyroute_cache_options_default(&o);
        o.timeout_ms = 500;
        st = keyroute_cache_open(redis_url, &o, &c);
        h = c;
        break;
    }
    case K_SESS: {
        keyroute_sessions *s = NULL;
        keyroute_session_options o;
        keyroute_session_options_default(&o);
        o.timeout_ms = 500;
        st = keyroute_sessions_open(redis_url, &o, &s);
        h = s;
        break;
    }
    case K_DEV: {
        keyroute_devices *d = NULL;
        st = keyroute_devices_open(redis_url, 500, &d);
        h = d;
        break;
    }
    }
    if (st != KEYROUTE_OK || !h) {
        fprintf(stderr, "cannot make handle %d: %s (%s)\n", k, keyroute_status_name(st),
                keyroute_last_error_message());
        exit(2);
    }
    return h;
}

/* A handle argument of kind k. */
static void *handle(int k)
{
    switch (below(8)) {
    case 0:
        bad = 1;
        return NULL;
    case 1: {
        int other = (int)below(K_COUNT);
        if (other == k)
            return live[k];
        bad = 1;
        return live[other];
    }
    case 2:
        bad = 1;
        return (char *)live[k] + 1 + below(7);
    default:
        return live[k];
    }
}

/* What a refused call must leave as it was. */
struct observed {
    size_t ring_len, ring_points, diff_len, pool_len, map_len, map_a, plan_len;
    int32_t complete;
};
static struct observed observe(void)
{
    struct observed o;
    memset(&o, 0, sizeof o); /* padding too: the structs are compared with memcmp */
    o.ring_len = keyroute_ring_len((keyroute_ring *)live[K_RING]);
    o.ring_points = keyroute_ring_point_count((keyroute_ring *)live[K_RING]);
    o.diff_len = keyroute_diff_len((keyroute_diff *)live[K_DIFF]);
    o.pool_len = keyroute_pool_len((keyroute_pool *)live[K_POOL]);
    o.map_len = keyroute_slot_map_len((keyroute_slot_map *)live[K_MAP]);
    o.map_a = keyroute_slot_map_slot_count((keyroute_slot_map *)live[K_MAP], 0);
    o.complete = keyroute_slot_map_is_complete((keyroute_slot_map *)live[K_MAP]);
    o.plan_len = keyroute_plan_len((keyroute_plan *)live[K_PLAN]);
    return o;
}

/* ------------------------------------------------------------------------------------ */
/* Arguments. Every buffer handed out lives until the end of the iteration. */

#define ARENA 256
static void *arena[ARENA];
static int arena_used;
static void *alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p || arena_used == ARENA) {
        fputs("fuzz_api: out of memory\n", stderr);
        exit(2);
    }
    arena[arena_used++] = p;
    return p;
}
static void arena_free(void)
{
    while (arena_used > 0)
        free(arena[--arena_used]);
}

/* A length no object can have: the library refuses it before reading. */
static size_t impossible_len(void)
{
    static const size_t lens[] = {(size_t)PTRDIFF_MAX + 1, SIZE_MAX, SIZE_MAX - 1,
                                  (size_t)1 << (sizeof(size_t) * 8 - 1)};
    return lens[below(4)];
}

/* A count above the batch limit (2^24). */
static size_t huge_count(void)
{
    static const size_t counts[] = {((size_t)1 << 24) + 1, (size_t)1 << 40, SIZE_MAX,
                                    (size_t)PTRDIFF_MAX + 1};
    return counts[below(4)];
}

static const char *const WORDS[] = {
    "a", "b", "c", "x", "y", "", "{a}", "{", "}", "native", "libketama", "libmemcached",
    "twemproxy", "uhashring", "node-hashring", "hash_ring", "ketama2", "a=2", "a:2",
    "10.0.0.1:11211", "10.0.0.1:11211:3 alias", "[::1]:6379", "a=0", "a=-1", "a=4294967296",
    "a,b,c", "a=1,b=1", "MOVED 42 10.0.0.1:7001", "ASK 1 :7000", "MOVED 16384 h:1",
    "least-used", "sc-get", "client-1", "kind-a", "device-1", "v1", "1.2.3.4", "10.0.0.1",
    "#", "a b c", "\t", "keep", "at_minimum",
};

/* Random bytes: braces, digits, separators, high bytes, invalid UTF-8. */
static void fill(uint8_t *p, size_t n)
{
    static const uint8_t alphabet[] = "ab{}:=, #\t\n0123456789.[]";
    for (size_t i = 0; i < n; i++) {
        switch (below(6)) {
        case 0:
            p[i] = (uint8_t)rnd();
            break;
        case 1:
            p[i] = (uint8_t)(0x80 + below(0x80));
            break;
        default:
            p[i] = alphabet[below(sizeof alphabet - 1)];
        }
    }
}

/* A NUL-terminated text argument; sets `bad` for invalid UTF-8 (checked later by the
 * library: a NULL is not counted as bad, some texts are optional). */
static int utf8_ok(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        size_t len;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            cp = c & 0x07;
        } else
            return 0;
        if (i + len > n)
            return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

static const char *text(void)
{
    switch (below(10)) {
    case 0:
        return NULL;
    case 1: {
        size_t n = below(24);
        uint8_t *p = alloc(n + 1);
        fill(p, n);
        for (size_t i = 0; i < n; i++)
            if (!p[i])
                p[i] = 'z';
        p[n] = 0;
        if (!utf8_ok(p, n))
            bad = 1;
        return (const char *)p;
    }
    case 2: {
        size_t n = 4096;
        char *p = alloc(n + 1);
        memset(p, 'k', n);
        p[n] = 0;
        return p;
    }
    default:
        return WORDS[below(sizeof WORDS / sizeof *WORDS)];
    }
}

/* A text the call needs to be valid, most of the time. */
static const char *word(const char *usual)
{
    return one_in(3) ? text() : usual;
}

/* A NUL-terminated byte string the API does not require to be UTF-8 (client ids, kinds,
 * device ids, session ids, a loader's error code and message). */
static const char *btext(void)
{
    int was = bad;
    const char *t = text();
    bad = was;
    return t;
}
static const char *bword(const char *usual)
{
    return one_in(3) ? btext() : usual;
}

/* A URL: the test server's, a refused port, or texts that are no URL (never a host name
 * that would be looked up). */
static const char *url(void)
{
    static const char *const urls[] = {"redis://127.0.0.1:1", "127.0.0.1:1", "", "redis://",
                                       "::::", "redis://:pw?x@127.0.0.1:1", "unix:///nope",
                                       "redis://127.0.0.1:99999"};
    if (one_in(2))
        return redis_url;
    if (one_in(6)) {
        bad = 1;
        return "\xff\xfe";
    }
    return one_in(8) ? NULL : urls[below(sizeof urls / sizeof *urls)];
}

struct bytes {
    const uint8_t *p;
    size_t len;
};
static struct bytes bytes(void)
{
    struct bytes b = {NULL, 0};
    switch (below(8)) {
    case 0:
        break;
    case 1:
        b.len = 1 + below(64);
        bad = 1;
        break;
    case 2:
        b.len = impossible_len();
        b.p = one_in(2) ? NULL : alloc(8);
        bad = 1;
        break;
    default: {
        size_t cap = below(4) == 0 ? 1024 : 24;
        uint8_t *p = alloc(cap);
        fill(p, cap);
        b.p = p;
        b.len = below(cap + 1);
    }
    }
    return b;
}

/* A byte list (ptrs, lens, count). */
struct list {
    const uint8_t **ptrs;
    size_t *lens;
    size_t count;
};
static struct list list(size_t cap)
{
    struct list l = {NULL, NULL, 0};
    switch (below(8)) {
    case 0:
        return l;
    case 1:
        l.count = huge_count();
        bad = 1;
        if (one_in(2))
            return l;
        break;
    default:
        l.count = 1 + below(cap);
    }
    size_t n = l.count > cap ? cap : l.count;
    l.ptrs = alloc(n * sizeof *l.ptrs);
    l.lens = alloc(n * sizeof *l.lens);
    for (size_t i = 0; i < n; i++) {
        struct bytes b = bytes();
        l.ptrs[i] = b.p;
        l.lens[i] = b.len;
    }
    if (one_in(10)) {
        l.ptrs = NULL;
        bad = 1;
    } else if (one_in(10)) {
        l.lens = NULL;
        bad = 1;
    }
    return l;
}

/* An output array of `count` entries of `size` bytes (NULL sometimes). */
/* Keys back to back for the _packed calls: bytes, and `count` ends (at most `cap` real
 * ones) that stay within them unless this is a bad draw. */
struct packed {
    struct bytes data;
    uint32_t *ends;
    size_t count;
};
static struct packed packed(size_t cap)
{
    struct packed k = {bytes(), NULL, 0};
    switch (below(8)) {
    case 0:
        return k;
    case 1:
        k.count = huge_count();
        bad = 1;
        if (one_in(2))
            return k;
        break;
    default:
        k.count = 1 + below(cap);
    }
    size_t n = k.count > cap ? cap : k.count, end = 0;
    k.ends = alloc(n * sizeof *k.ends);
    for (size_t i = 0; i < n; i++) {
        if (one_in(12)) {
            end = end ? end - 1 : k.data.len + 1; /* goes down, or past the bytes */
            bad = 1;
        } else if (k.data.len > end && k.data.len < UINT32_MAX) {
            end += below(k.data.len - end + 1);
        }
        k.ends[i] = (uint32_t)end;
    }
    if (one_in(10)) {
        k.ends = NULL;
        bad = 1;
    }
    return k;
}
static void *out_array(size_t count, size_t size)
{
    if (one_in(10)) {
        if (count)
            bad = 1;
        return NULL;
    }
    return alloc(count * size);
}

/* An optional out-pointer: real, or NULL now and then. */
#define OUT(T) (one_in(8) ? (T *)NULL : (T *)alloc(sizeof(T)))

static int64_t number(void)
{
    static const int64_t edges[] = {0,
                                    1,
                                    -1,
                                    2,
                                    3,
                                    7000,
                                    65535,
                                    65536,
                                    INT32_MAX,
                                    INT32_MIN,
                                    (int64_t)1 << 32,
                                    ((int64_t)1 << 32) - 1,
                                    (int64_t)1 << 53,
                                    ((int64_t)1 << 53) + 1,
                                    INT64_MAX,
                                    INT64_MIN};
    return one_in(3) ? (int64_t)below(8) : edges[below(sizeof edges / sizeof *edges)];
}
static uint64_t unumber(void) { return (uint64_t)number(); }
/* A weight that cannot build a huge ring (vnodes x weight stays small when accepted). */
static int64_t weight(void)
{
    static const int64_t edges[] = {0, -1, INT32_MIN, INT64_MIN, INT64_MAX, (int64_t)1 << 32,
                                    ((int64_t)1 << 32) - 1, INT32_MAX};
    return one_in(4) ? edges[below(8)] : 1 + (int64_t)below(4);
}
static keyroute_ring_options *ring_options(void)
{
    static const int64_t vnodes[] = {0, 1, 2, 40, 65537, -1, INT64_MAX, ((int64_t)1 << 32) + 160};
    if (one_in(2))
        return NULL;
    keyroute_ring_options *o = alloc(sizeof *o);
    o->vnodes = vnodes[below(8)];
    o->points_per_digest = number() % 7;
    o->default_port = one_in(2) ? 0 : number();
    return o;
}

/* A loader: writes bytes, fails, or calls the load functions with bad arguments. Loaders
 * may run on several threads at once (warm-ups), so it draws nothing from the shared
 * generator and touches no shared state but an atomic counter. */
static long loader_calls;
static int32_t loader_ok(void *ctx, const char *client, const char *kind, keyroute_load *load)
{
    static const uint8_t data[] = "value";
    (void)ctx;
    (void)client;
    (void)kind;
    switch (__sync_fetch_and_add(&loader_calls, 1) % 7) {
    case 0:
        return keyroute_load_write(load, data, 5);
    case 1:
        return keyroute_load_fail(load, "E_FUZZ", "the fuzzer's loader failed");
    case 2:
        return keyroute_load_write(load, NULL, 3); /* NULL with a length: refused */
    case 3:
        return keyroute_load_write(load, data, SIZE_MAX); /* refused before reading */
    case 4:
        return keyroute_load_fail(load, NULL, "\xff\xfe not UTF-8");
    case 5:
        return keyroute_load_write(NULL, data, 5);
    default:
        return keyroute_load_write((keyroute_load *)((char *)load + 1), data, 5);
    }
}
static keyroute_loader loader(void) { return one_in(8) ? NULL : loader_ok; }

/* ------------------------------------------------------------------------------------ */
/* Calls. */

#define CALL(name) static keyroute_status name(void)

CALL(c_key_slot)
{
    struct bytes k = bytes();
    if (k.len > 1024 || (!k.p && k.len)) {
        bad = 0; /* keyroute_key_slot has no status: such a key is a caller's bug */
        k.p = NULL;
        k.len = 0;
    }
    uint16_t s = keyroute_key_slot(k.p, k.len);
    return s < KEYROUTE_SLOT_COUNT ? KEYROUTE_OK : KEYROUTE_INTERNAL;
}
CALL(c_key_slots)
{
    struct list l = list(16);
    return keyroute_key_slots(l.ptrs, l.lens, l.count, out_array(l.count > 16 ? 16 : l.count, 2));
}
CALL(c_key_slots_packed)
{
    struct packed k = packed(16);
    return keyroute_key_slots_packed(k.data.p, k.data.len, k.ends, k.count,
                                     out_array(k.count > 16 ? 16 : k.count, 2));
}
CALL(c_hash_tag)
{
    struct bytes k = bytes();
    return keyroute_hash_tag(k.p, k.len, OUT(size_t), OUT(size_t));
}
CALL(c_slot_map_add_master)
{
    return keyroute_slot_map_add_master(handle(K_MAP), word("z"), word("10.0.0.9"), number(),
                                        OUT(size_t));
}
CALL(c_slot_map_add_replica)
{
    return keyroute_slot_map_add_replica(handle(K_MAP), (size_t)unumber(), word("r"),
                                         word("10.0.0.8"), number(), OUT(size_t));
}
CALL(c_slot_map_assign)
{
    return keyroute_slot_map_assign(handle(K_MAP), (uint16_t)number(), (uint16_t)number(),
                                    (size_t)unumber());
}
CALL(c_slot_map_unassign)
{
    return keyroute_slot_map_unassign(handle(K_MAP), (uint16_t)number(), (uint16_t)number());
}
CALL(c_slot_map_owner)
{
    return keyroute_slot_map_owner(handle(K_MAP), (uint16_t)number(), OUT(size_t));
}
CALL(c_slot_map_owner_of_key)
{
    struct bytes k = bytes();
    return keyroute_slot_map_owner_of_key(handle(K_MAP), k.p, k.len, OUT(size_t), OUT(uint16_t));
}
CALL(c_slot_map_node)
{
    return keyroute_slot_map_node(handle(K_MAP), (size_t)unumber(), OUT(const char *),
                                  OUT(const char *), OUT(uint16_t), OUT(int32_t), OUT(size_t));
}
CALL(c_slot_map_counts)
{
    void *m = handle(K_MAP);
    (void)keyroute_slot_map_len(m);
    (void)keyroute_slot_map_slot_count(m, (size_t)unumber());
    (void)keyroute_slot_map_is_complete(m);
    return bad ? KEYROUTE_INVALID_HANDLE : KEYROUTE_OK;
}
CALL(c_redirect_parse)
{
    struct bytes m = one_in(2) ? bytes() : (struct bytes){(const uint8_t *)"MOVED 42 :7001", 14};
    return keyroute_redirect_parse(m.p, m.len, text(), OUT(keyroute_redirect));
}
CALL(c_slot_map_apply_redirect)
{
    struct bytes m = one_in(2) ? bytes() : (struct bytes){(const uint8_t *)"ASK 42 :7001", 12};
    return keyroute_slot_map_apply_redirect(handle(K_MAP), m.p, m.len, text(),
                                            OUT(keyroute_redirect));
}
CALL(c_ring_new)
{
    keyroute_ring *r = NULL;
    keyroute_status st = keyroute_ring_new(word("native"), ring_options(), one_in(8) ? NULL : &r);
    keyroute_ring_free(r);
    return st;
}
CALL(c_ring_from_spec)
{
    keyroute_ring *r = NULL;
    keyroute_status st = keyroute_ring_from_spec(word("libketama"), ring_options(),
                                                 word("a,b=2"), one_in(8) ? NULL : &r);
    keyroute_ring_free(r);
    return st;
}
CALL(c_ring_add) { return keyroute_ring_add(handle(K_RING), word("d"), weight()); }
CALL(c_ring_remove) { return keyroute_ring_remove(handle(K_RING), word("d")); }
CALL(c_ring_set_weight) { return keyroute_ring_set_weight(handle(K_RING), word("a"), weight()); }
CALL(c_ring_get)
{
    struct bytes k = bytes();
    return keyroute_ring_get(handle(K_RING), k.p, k.len, OUT(const char *), OUT(size_t));
}
CALL(c_ring_get_index)
{
    struct bytes k = bytes();
    return keyroute_ring_get_index(handle(K_RING), k.p, k.len, OUT(size_t));
}
CALL(c_ring_get_many)
{
    struct list l = list(16);
    return keyroute_ring_get_many(handle(K_RING), (const uint8_t *const *)l.ptrs, l.lens, l.count,
                                  out_array(l.count > 16 ? 16 : l.count, sizeof(size_t)));
}
CALL(c_ring_get_many_packed)
{
    struct packed k = packed(16);
    return keyroute_ring_get_many_packed(handle(K_RING), k.data.p, k.data.len, k.ends, k.count,
                                         out_array(k.count > 16 ? 16 : k.count, 4));
}
CALL(c_ring_get_n)
{
    struct bytes k = bytes();
    /* n may be SIZE_MAX when the arrays hold as many entries as the ring has nodes. */
    size_t n = one_in(6) ? huge_count() : below(9);
    size_t cap = n > 8 ? keyroute_ring_len((keyroute_ring *)live[K_RING]) : n;
    return keyroute_ring_get_n(handle(K_RING), k.p, k.len, n,
                               out_array(cap, sizeof(const char *)),
                               one_in(10) ? NULL : alloc(cap * sizeof(size_t)), /* optional */
                               OUT(size_t));
}
CALL(c_ring_info)
{
    void *r = handle(K_RING);
    (void)keyroute_ring_len(r);
    (void)keyroute_ring_point_count(r);
    (void)keyroute_ring_profile(r);
    return bad ? KEYROUTE_INVALID_HANDLE : KEYROUTE_OK;
}
CALL(c_ring_node)
{
    return keyroute_ring_node(handle(K_RING), (size_t)unumber(), OUT(const char *), OUT(size_t),
                              OUT(uint32_t));
}
CALL(c_ring_shares)
{
    /* A capacity above what is written is no error: only len() entries are written. */
    size_t cap = one_in(6) ? huge_count() : below(8);
    size_t room = cap > 8 ? keyroute_ring_len((keyroute_ring *)live[K_RING]) : cap;
    return keyroute_ring_shares(handle(K_RING), out_array(room, sizeof(double)), cap,
                                OUT(size_t));
}
CALL(c_ring_diff)
{
    keyroute_diff *d = NULL;
    keyroute_status st = keyroute_ring_diff(handle(K_RING), handle(K_RING), one_in(8) ? NULL : &d);
    keyroute_diff_free(d);
    return st;
}
CALL(c_diff_read)
{
    void *d = handle(K_DIFF);
    (void)keyroute_diff_moved_fraction(d);
    (void)keyroute_diff_ideal_fraction(d);
    (void)keyroute_diff_len(d);
    return keyroute_diff_arc(d, (size_t)unumber() % 4, OUT(uint64_t), OUT(uint64_t),
                             OUT(const char *), OUT(const char *));
}
CALL(c_plan_new)
{
    keyroute_plan *p = NULL;
    size_t count = one_in(6) ? huge_count() : below(4);
    size_t n = count > 4 ? 4 : count;
    size_t *nodes = out_array(n, sizeof(size_t));
    uint64_t *weights = out_array(n, sizeof(uint64_t));
    if (count > 4)
        bad = 1;
    for (size_t i = 0; nodes && weights && i < n; i++) {
        nodes[i] = (size_t)below(4);
        weights[i] = one_in(4) ? unumber() : below(3);
    }
    keyroute_status st = keyroute_plan_new(handle(K_MAP), nodes, weights, count,
                                           one_in(8) ? NULL : &p);
    keyroute_plan_free(p);
    return st;
}
CALL(c_plan_from_spec)
{
    keyroute_plan *p = NULL;
    keyroute_status st = keyroute_plan_from_spec(handle(K_MAP), word("a=1,b=2"), one_in(8) ? NULL : &p);
    keyroute_plan_free(p);
    return st;
}
CALL(c_plan_read)
{
    void *p = handle(K_PLAN);
    (void)keyroute_plan_len(p);
    (void)keyroute_plan_slots_moved(p);
    (void)keyroute_plan_target_count(p);
    keyroute_status st = keyroute_plan_move(p, (size_t)unumber() % 3, OUT(uint16_t), OUT(uint16_t),
                                            OUT(size_t), OUT(size_t));
    if (st > KEYROUTE_EMPTY)
        return st;
    return keyroute_plan_target(p, (size_t)unumber() % 3, OUT(size_t), OUT(uint64_t),
                                OUT(double), OUT(size_t), OUT(size_t));
}
CALL(c_plan_apply)
{
    /* On a copy-free map: a fresh map, so the live map keeps its shape. */
    keyroute_slot_map *m = NULL;
    keyroute_slot_map_new(&m);
    keyroute_status st = keyroute_plan_apply(handle(K_PLAN), one_in(3) ? m : handle(K_MAP));
    keyroute_slot_map_free(m);
    return st;
}
CALL(c_pool_seed)
{
    struct list l = list(8);
    return keyroute_pool_seed(handle(K_POOL), (const uint8_t *const *)l.ptrs, l.lens, l.count,
                              one_in(3) ? unumber() : 0, (int32_t)number(), OUT(size_t));
}
CALL(c_pool_pick)
{
    return keyroute_pool_pick(handle(K_POOL), OUT(const uint8_t *), OUT(size_t));
}
CALL(c_pool_pick_many)
{
    size_t n = one_in(6) ? huge_count() : below(9);
    size_t cap = n > 8 ? 8 : n;
    if (n > 8)
        bad = 1;
    return keyroute_pool_pick_many(handle(K_POOL), n, out_array(cap, sizeof(const uint8_t *)),
                                   out_array(cap, sizeof(size_t)), OUT(size_t));
}
CALL(c_pool_remove)
{
    struct bytes m = one_in(2) ? bytes() : (struct bytes){(const uint8_t *)"x", 1};
    return keyroute_pool_remove(handle(K_POOL), m.p, m.len, OUT(uint64_t));
}
CALL(c_pool_restore)
{
    struct bytes m = one_in(2) ? bytes() : (struct bytes){(const uint8_t *)"x", 1};
    return keyroute_pool_restore(handle(K_POOL), m.p, m.len, (int32_t)number(), OUT(uint64_t));
}
CALL(c_pool_count)
{
    struct bytes m = bytes();
    void *p = handle(K_POOL);
    (void)keyroute_pool_len(p);
    keyroute_status st = keyroute_pool_count(p, m.p, m.len, OUT(uint64_t));
    if (st > KEYROUTE_EMPTY)
        return st;
    return keyroute_pool_removed_count(p, m.p, m.len, OUT(uint64_t));
}
CALL(c_side_key)
{
    struct bytes k = bytes();
    size_t cap = one_in(6) ? 0 : below(64);
    return keyroute_side_key(k.p, k.len, out_array(cap, 1), cap, OUT(size_t));
}
static const char **seeds(size_t *count);
CALL(c_least_used_open)
{
    keyroute_least_used *lu = NULL;
    struct bytes k = one_in(2) ? bytes() : (struct bytes){(const uint8_t *)pool_key, strlen(pool_key)};
    keyroute_status st;
    if (one_in(3)) {
        size_t n;
        const char **s = seeds(&n);
        st = keyroute_least_used_open_cluster(s, n, k.p, k.len, 200 + (uint32_t)below(300),
                                              one_in(8) ? NULL : &lu);
    } else {
        st = keyroute_least_used_open(url(), k.p, k.len, 200 + (uint32_t)below(300),
                                      one_in(8) ? NULL : &lu);
    }
    keyroute_least_used_free(lu);
    return st;
}
CALL(c_least_used_seed)
{
    struct list l = list(4);
    return keyroute_least_used_seed(handle(K_LU), (const uint8_t *const *)l.ptrs, l.lens, l.count,
                                    one_in(3) ? unumber() : 0, (int32_t)number(), OUT(size_t));
}
CALL(c_least_used_pick)
{
    size_t cap = below(16);
    return keyroute_least_used_pick(handle(K_LU), out_array(cap, 1), cap, OUT(size_t));
}
CALL(c_least_used_member)
{
    struct bytes m = one_in(2) ? bytes() : (struct bytes){(const uint8_t *)"x", 1};
    void *lu = handle(K_LU);
    switch (below(3)) {
    case 0:
        return keyroute_least_used_remove(lu, m.p, m.len, OUT(uint64_t));
    case 1:
        return keyroute_least_used_restore(lu, m.p, m.len, (int32_t)number(), OUT(uint64_t));
    default:
        return keyroute_least_used_count(lu, m.p, m.len, OUT(uint64_t));
    }
}
CALL(c_leases_open)
{
    keyroute_leases *l = NULL;
    struct bytes k = one_in(2) ? bytes() : (struct bytes){(const uint8_t *)lease_key, strlen(lease_key)};
    keyroute_status st;
    if (one_in(3)) {
        size_t n;
        const char **s = seeds(&n);
        st = keyroute_leases_open_cluster(s, n, k.p, k.len, 200 + (uint32_t)below(300),
                                          one_in(8) ? NULL : &l);
    } else {
        st = keyroute_leases_open(url(), k.p, k.len, 200 + (uint32_t)below(300),
                                  one_in(8) ? NULL : &l);
    }
    keyroute_leases_free(l);
    return st;
}
CALL(c_leases_calls)
{
    void *l = handle(K_LEASES);
    switch (below(5)) {
    case 0: {
        struct list s = list(4);
        return keyroute_leases_seed(l, (const uint8_t *const *)s.ptrs, s.lens, s.count, OUT(size_t));
    }
    case 1: {
        struct bytes m = bytes();
        return keyroute_leases_remove(l, m.p, m.len);
    }
    case 2: {
        size_t cap = below(16);
        return keyroute_leases_acquire(l, unumber(), out_array(cap, 1), cap, OUT(size_t),
                                       OUT(uint64_t), OUT(uint64_t));
    }
    case 3:
        return keyroute_leases_release(l, unumber(), OUT(keyroute_release));
    default:
        return keyroute_leases_reclaim(l, OUT(size_t));
    }
}
static keyroute_cache_options *cache_options(void)
{
    if (one_in(3))
        return NULL;
    keyroute_cache_options *o = alloc(sizeof *o);
    keyroute_cache_options_default(o);
    o->timeout_ms = 300;
    switch (below(8)) {
    case 0:
        o->lease_ms = number();
        break;
    case 1:
        o->soft_ttl_ms = number();
        break;
    case 2:
        o->hard_ttl_ms = number();
        break;
    case 3:
        o->neg_ttl_ms = number();
        break;
    case 4: {
        static const double betas[] = {0.0, -1.0, 1e300, 1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0, 5e-324};
        o->xfetch_beta = betas[below(7)];
        break;
    }
    case 5:
        o->max_value_len = unumber();
        break;
    default:
        break;
    }
    return o;
}
static const char **seeds(size_t *count)
{
    *count = one_in(6) ? huge_count() : below(3);
    size_t n = *count > 2 ? 2 : *count;
    if (*count > 2)
        bad = 1;
    const char **s = out_array(n, sizeof(char *));
    for (size_t i = 0; s && i < n; i++)
        s[i] = url();
    return s;
}
CALL(c_cache_open)
{
    keyroute_cache *c = NULL;
    keyroute_status st;
    if (one_in(3)) {
        size_t n;
        const char **s = seeds(&n);
        st = keyroute_cache_open_cluster(s, n, cache_options(), one_in(8) ? NULL : &c);
    } else {
        st = keyroute_cache_open(url(), cache_options(), one_in(8) ? NULL : &c);
    }
    keyroute_cache_free(c);
    return st;
}
CALL(c_cache_get_or_load)
{
    uint8_t *value = NULL;
    keyroute_status st = keyroute_cache_get_or_load(handle(K_CACHE), bword("client-1"), bword("kind-a"),
                                                    one_in(3) ? number() : 300, loader(), NULL,
                                                    one_in(8) ? NULL : &value, OUT(size_t));
    keyroute_value_free(value);
    return st;
}
CALL(c_cache_invalidate)
{
    return keyroute_cache_invalidate(handle(K_CACHE), bword("client-1"), bword("kind-a"), OUT(int32_t));
}
CALL(c_cache_warm)
{
    size_t count = one_in(6) ? huge_count() : below(4);
    size_t n = count > 3 ? 3 : count;
    if (count > 3)
        bad = 1;
    const char **kinds = out_array(n, sizeof(char *));
    for (size_t i = 0; kinds && i < n; i++)
        kinds[i] = bword("kind-a");
    return keyroute_cache_warm(handle(K_CACHE), bword("device-1"), kinds, count, loader(), NULL,
                               out_array(n, sizeof(keyroute_warm_outcome)));
}
CALL(c_cache_stats)
{
    return keyroute_cache_stats(handle(K_CACHE), OUT(keyroute_cache_counters));
}
CALL(c_sessions_open)
{
    keyroute_sessions *s = NULL;
    keyroute_session_options *o = NULL;
    if (!one_in(3)) {
        o = alloc(sizeof *o);
        keyroute_session_options_default(o);
        o->timeout_ms = 300;
        if (one_in(2))
            o->ttl_ms = number();
        else
            o->max_age_ms = number();
    }
    keyroute_status st;
    if (one_in(3)) {
        size_t n;
        const char **seed = seeds(&n);
        st = keyroute_sessions_open_cluster(seed, n, o, one_in(8) ? NULL : &s);
    } else {
        st = keyroute_sessions_open(url(), o, one_in(8) ? NULL : &s);
    }
    keyroute_sessions_free(s);
    return st;
}
static char last_sid[KEYROUTE_SESSION_ID_SIZE] = "aaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaa";
CALL(c_sessions_calls)
{
    void *s = handle(K_SESS);
    switch (below(4)) {
    case 0: {
        struct bytes d = bytes();
        size_t cap = one_in(4) ? below(KEYROUTE_SESSION_ID_SIZE) : KEYROUTE_SESSION_ID_SIZE;
        char *sid = out_array(cap, 1);
        keyroute_status st = keyroute_sessions_create(s, bword("client-1"), word("v1"), d.p, d.len,
                                                      sid, cap, OUT(uint64_t));
        if (st == KEYROUTE_OK)
            memcpy(last_sid, sid, KEYROUTE_SESSION_ID_SIZE);
        return st;
    }
    case 1: {
        keyroute_session_info *info = OUT(keyroute_session_info);
        if (info)
            memset(info, 0, sizeof *info);
        keyroute_status st = keyroute_sessions_touch(s, one_in(2) ? last_sid : btext(), text(), info);
        if (info)
            keyroute_session_info_clear(info);
        return st;
    }
    case 2:
        return keyroute_sessions_destroy(s, one_in(2) ? last_sid : btext(), OUT(int32_t));
    default: {
        size_t cap = one_in(6) ? huge_count() : below(4);
        if (cap > 3)
            bad = 1;
        return keyroute_sessions_list(s, bword("client-1"),
                                      out_array(cap > 3 ? 3 : cap, sizeof(keyroute_session_entry)),
                                      cap, OUT(size_t));
    }
    }
}
CALL(c_devices)
{
    keyroute_devices *d = NULL;
    switch (below(3)) {
    case 0: {
        keyroute_status st;
        if (one_in(2)) {
            size_t n;
            const char **seed = seeds(&n);
            st = keyroute_devices_open_cluster(seed, n, 300, one_in(8) ? NULL : &d);
        } else {
            st = keyroute_devices_open(url(), 300, one_in(8) ? NULL : &d);
        }
        keyroute_devices_free(d);
        return st;
    }
    case 1:
        return keyroute_devices_bind(handle(K_DEV), bword("device-1"), bword("client-1"),
                                     one_in(2) ? number() : 60000);
    default: {
        uint8_t *client = NULL;
        keyroute_status st = keyroute_devices_client_of(handle(K_DEV), bword("device-1"),
                                                        one_in(8) ? NULL : &client, OUT(size_t));
        keyroute_value_free(client);
        return st;
    }
    }
}
CALL(c_scripts)
{
    (void)keyroute_script_count();
    keyroute_status st = keyroute_script_at((size_t)unumber() % 40, OUT(keyroute_script_info));
    if (st > KEYROUTE_EMPTY)
        return st;
    return keyroute_script(word("least-used"), OUT(keyroute_script_info));
}
CALL(c_status_texts)
{
    int32_t s = (int32_t)number();
    const char *a = keyroute_status_str(s), *b = keyroute_status_name(s);
    return a && b && keyroute_version() ? KEYROUTE_OK : KEYROUTE_INTERNAL;
}

/* Frees: a live handle (then made again), NULL, a handle of another kind, misaligned. */
CALL(c_free)
{
    int k = (int)below(K_COUNT);
    void *h = handle(k);
    keyroute_status st = KEYROUTE_OK;
    switch (k) {
    case K_RING: st = keyroute_ring_free(h); break;
    case K_DIFF: st = keyroute_diff_free(h); break;
    case K_POOL: st = keyroute_pool_free(h); break;
    case K_MAP: st = keyroute_slot_map_free(h); break;
    case K_PLAN: st = keyroute_plan_free(h); break;
    case K_LU: st = keyroute_least_used_free(h); break;
    case K_LEASES: st = keyroute_leases_free(h); break;
    case K_CACHE: st = keyroute_cache_free(h); break;
    case K_SESS: st = keyroute_sessions_free(h); break;
    case K_DEV: st = keyroute_devices_free(h); break;
    }
    if (!h && st == KEYROUTE_OK)
        bad = 0; /* NULL is ignored by every free */
    if (h == live[k] && st == KEYROUTE_OK)
        live[k] = make(k);
    return st;
}

struct call {
    const char *name;
    keyroute_status (*fn)(void);
};
#define C(f, r) {#f + 2, f}
static const struct call CALLS[] = {
    C(c_key_slot, 0), C(c_key_slots, 0), C(c_key_slots_packed, 0), C(c_hash_tag, 0), C(c_slot_map_add_master, 0),
    C(c_slot_map_add_replica, 0), C(c_slot_map_assign, 0), C(c_slot_map_unassign, 0),
    C(c_slot_map_owner, 0), C(c_slot_map_owner_of_key, 0), C(c_slot_map_node, 0),
    C(c_slot_map_counts, 0), C(c_redirect_parse, 0), C(c_slot_map_apply_redirect, 0),
    C(c_ring_new, 0), C(c_ring_from_spec, 0), C(c_ring_add, 0), C(c_ring_remove, 0),
    C(c_ring_set_weight, 0), C(c_ring_get, 0), C(c_ring_get_index, 0), C(c_ring_get_many, 0), C(c_ring_get_many_packed, 0),
    C(c_ring_get_n, 0), C(c_ring_info, 0), C(c_ring_node, 0), C(c_ring_shares, 0),
    C(c_ring_diff, 0), C(c_diff_read, 0), C(c_plan_new, 0), C(c_plan_from_spec, 0),
    C(c_plan_read, 0), C(c_plan_apply, 0), C(c_pool_seed, 0), C(c_pool_pick, 0),
    C(c_pool_pick_many, 0), C(c_pool_remove, 0), C(c_pool_restore, 0), C(c_pool_count, 0),
    C(c_side_key, 0), C(c_least_used_open, 1), C(c_least_used_seed, 1),
    C(c_least_used_pick, 1), C(c_least_used_member, 1), C(c_leases_open, 1),
    C(c_leases_calls, 1), C(c_cache_open, 1), C(c_cache_get_or_load, 1),
    C(c_cache_invalidate, 1), C(c_cache_warm, 1), C(c_cache_stats, 0), C(c_sessions_open, 1),
    C(c_sessions_calls, 1), C(c_devices, 1), C(c_scripts, 0), C(c_status_texts, 0),
    C(c_free, 1),
};
#define NCALLS (sizeof CALLS / sizeof *CALLS)

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 20000;
    if (argc > 2)
        rng = strtoull(argv[2], NULL, 0) | 1;
    redis_url = getenv("KEYROUTE_TEST_REDIS_URL");
    if (!redis_url) {
        fputs("fuzz_api: KEYROUTE_TEST_REDIS_URL is not set (run it under tests/with_redis.sh)\n",
              stderr);
        return 2;
    }
    for (int k = 0; k < K_COUNT; k++)
        live[k] = make(k);
    for (long i = 0; i < iterations; i++) {
        size_t index = below(NCALLS);
        const struct call *c = &CALLS[index];
        current = c->name;
        bad = 0;
        struct observed before = observe();
        keyroute_status st = c->fn();
        calls_made++;
        int s = (int)st;
        if (s < 0 || s >= MAX_STATUS || strcmp(keyroute_status_name(s), "UNKNOWN") == 0) {
            fail("a status the header does not name", s);
            continue;
        }
        table[index][s]++;
        if (st == KEYROUTE_INTERNAL)
            fail("KEYROUTE_INTERNAL (a caught panic)", s);
        if (st > KEYROUTE_EMPTY) {
            const char *msg = keyroute_last_error_message();
            if (!msg || !*msg)
                fail("an error without a message", s);
        }
        if (bad && st <= KEYROUTE_EMPTY)
            fail("a certainly bad argument was accepted", s);
        if (bad && st > KEYROUTE_EMPTY && c->fn != c_free) {
            struct observed after = observe();
            if (memcmp(&before, &after, sizeof before) != 0)
                fail("a refused call changed a live handle", s);
        }
        arena_free();
    }
    /* The table: calls x statuses. */
    printf("%-22s %8s  statuses (count)\n", "call", "calls");
    for (size_t c = 0; c < NCALLS; c++) {
        long total = 0;
        char line[2048] = "";
        size_t used = 0;
        for (int s = 0; s < MAX_STATUS; s++) {
            if (!table[c][s])
                continue;
            total += table[c][s];
            used += (size_t)snprintf(line + used, sizeof line - used, " %s:%ld",
                                     keyroute_status_name(s), table[c][s]);
            if (used >= sizeof line)
                break;
        }
        printf("%-22s %8ld %s\n", CALLS[c].name, total, line);
    }
    for (int k = 0; k < K_COUNT; k++) {
        switch (k) {
        case K_RING: keyroute_ring_free(live[k]); break;
        case K_DIFF: keyroute_diff_free(live[k]); break;
        case K_POOL: keyroute_pool_free(live[k]); break;
        case K_MAP: keyroute_slot_map_free(live[k]); break;
        case K_PLAN: keyroute_plan_free(live[k]); break;
        case K_LU: keyroute_least_used_free(live[k]); break;
        case K_LEASES: keyroute_leases_free(live[k]); break;
        case K_CACHE: keyroute_cache_free(live[k]); break;
        case K_SESS: keyroute_sessions_free(live[k]); break;
        case K_DEV: keyroute_devices_free(live[k]); break;
        }
    }
    printf("%ld passed, %ld failed\n", calls_made - failures, failures);
    return failures ? 1 : 0;
}
