/*
 * libkeyroute lookups side by side with libmemcached's ketama (KETAMA_WEIGHTED, MD5) on the
 * same 100 servers and the same 4096 16-byte keys as core/benches/ring.rs, plus
 * keyroute_key_slot. `make bench-c` (links the static libkeyroute, -O2).
 *
 * Before timing, every key is checked: keyroute's libmemcached profile must pick the same
 * server index as memcached_generate_hash.
 *
 * `bench_c --json PATH` also writes the figures as report rows (the shape of
 * bench/README.md) for `make bench-report`: the like-for-like row (libmemcached profile vs
 * libmemcached, identical answers) first, then the libketama profile against the same
 * peer (another weighting, labelled so) and keyroute's own figures.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <keyroute.h>
#include <libmemcached/memcached.h>

#define NKEYS 4096
#define NSERVERS 100
#define ITERS (1u << 12)
#define ROUNDS 500

static uint8_t keys[NKEYS][16];
static volatile uint64_t sink;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A JSON string (the texts here are ASCII constants and version strings; quotes,
 * backslashes and control characters are escaped all the same). */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

struct row {
    const char *id, *group, *what, *unit;
    double keyroute;
    const char *peer, *peer_version; /* NULL: no peer */
    double peer_value;
    int same_answers; /* 1, 0, or -1: not checked */
    int like_for_like, headline;
    const char *note;
};

static void json_row(FILE *f, const struct row *r, int last)
{
    fputs("    {\"id\": ", f);
    json_str(f, r->id);
    fputs(", \"group\": ", f);
    json_str(f, r->group);
    fputs(", \"what\": ", f);
    json_str(f, r->what);
    fputs(", \"measure\": \"wall\", \"unit\": ", f);
    json_str(f, r->unit);
    fprintf(f, ", \"better\": \"lower\", \"keyroute\": %.4g, \"peer\": ", r->keyroute);
    if (r->peer) {
        json_str(f, r->peer);
        fputs(", \"peer_version\": ", f);
        json_str(f, r->peer_version);
        fprintf(f, ", \"peer_value\": %.4g, \"ratio\": %.4g", r->peer_value,
                r->peer_value / r->keyroute);
    } else {
        fputs("null, \"peer_version\": null, \"peer_value\": null, \"ratio\": null", f);
    }
    fprintf(f, ", \"same_answers\": %s, \"like_for_like\": %s, \"headline\": %s, \"note\": ",
            r->same_answers < 0 ? "null" : r->same_answers ? "true" : "false",
            r->like_for_like ? "true" : "false", r->headline ? "true" : "false");
    json_str(f, r->note);
    fputs(last ? "}\n" : "},\n", f);
}

/* Writes PATH (through PATH.tmp, renamed when complete). */
static int write_json(const char *path, const struct row *rows, size_t n)
{
    char tmp[4096], load[128] = "";
    FILE *f, *la;
    size_t i;
    double l1, l5, l15;
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return -1;
    f = fopen(tmp, "w");
    if (!f)
        return -1;
    la = fopen("/proc/loadavg", "r");
    if (la && fscanf(la, "%lf %lf %lf", &l1, &l5, &l15) == 3)
        snprintf(load, sizeof load, "[%.2f, %.2f, %.2f]", l1, l5, l15);
    if (la)
        fclose(la);
    fprintf(f, "{\n  \"schema\": 1,\n  \"suite\": \"c\",\n"
               "  \"source\": \"bindings-c/bench/bench.c\",\n"
               "  \"method\": \"wall clock (CLOCK_MONOTONIC); fastest of %d interleaved bursts of %u calls "
               "on %d servers and %d keys of 16 B; static libkeyroute, gcc -O2\",\n"
               "  \"unix_time\": %ld,\n  \"load_average\": %s,\n  \"rows\": [\n",
            ROUNDS, ITERS, NSERVERS, NKEYS, (long)time(NULL), load[0] ? load : "null");
    for (i = 0; i < n; i++)
        json_row(f, &rows[i], i + 1 == n);
    fputs("  ]\n}\n", f);
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}

static keyroute_ring *ring_of(const char *profile)
{
    keyroute_ring *r = NULL;
    char name[64];
    int i;
    if (keyroute_ring_new(profile, NULL, &r) != KEYROUTE_OK)
        exit(1);
    for (i = 0; i < NSERVERS; i++) {
        snprintf(name, sizeof name, "10.0.%d.%d:11211", i >> 8, i & 255);
        if (keyroute_ring_add(r, name, 1) != KEYROUTE_OK)
            exit(1);
    }
    return r;
}

typedef uint64_t (*op_fn)(const void *ctx, const uint8_t *key);

static uint64_t op_ring_get(const void *ctx, const uint8_t *key)
{
    const char *node;
    size_t len;
    keyroute_ring_get((const keyroute_ring *)ctx, key, 16, &node, &len);
    return len;
}

static uint64_t op_ring_index(const void *ctx, const uint8_t *key)
{
    size_t i = 0;
    keyroute_ring_get_index((const keyroute_ring *)ctx, key, 16, &i);
    return i;
}

static uint64_t op_memcached(const void *ctx, const uint8_t *key)
{
    return memcached_generate_hash((const memcached_st *)ctx, (const char *)key, 16);
}

static uint64_t op_key_slot(const void *ctx, const uint8_t *key)
{
    (void)ctx;
    return keyroute_key_slot(key, 16);
}

struct bench {
    const char *label;
    op_fn f;
    const void *ctx;
    double best;
};

/* One burst of ITERS calls, in ns per call. */
static double burst(const struct bench *b)
{
    uint64_t acc = 0;
    uint32_t i;
    double t0 = now_ns(), ns;
    for (i = 0; i < ITERS; i++)
        acc += b->f(b->ctx, keys[i & (NKEYS - 1)]);
    ns = (now_ns() - t0) / ITERS;
    sink += acc;
    return ns;
}

/* Interleaves the benches round by round (so load from other processes hits them
 * alike) and keeps each one's fastest burst. */
static void run(struct bench *bs, size_t n)
{
    size_t r, j;
    for (j = 0; j < n; j++)
        bs[j].best = 1e30;
    for (r = 0; r < ROUNDS; r++)
        for (j = 0; j < n; j++) {
            double ns = burst(&bs[j]);
            if (ns < bs[j].best)
                bs[j].best = ns;
        }
    for (j = 0; j < n; j++)
        printf("%-48s %7.2f ns/op\n", bs[j].label, bs[j].best);
}

int main(int argc, char **argv)
{
    keyroute_ring *ketama, *memc, *native;
    memcached_st *mc = memcached_create(NULL);
    char host[64];
    int i, mismatches = 0, ketama_differs = 0;
    double t_ketama, t_ketama_index, t_memc_kr, t_mc, t_native, t_slot;
    const char *json = NULL;

    if (argc == 3 && strcmp(argv[1], "--json") == 0) {
        json = argv[2];
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [--json PATH]\n", argv[0]);
        return 2;
    }

    for (i = 0; i < NKEYS; i++) {
        uint64_t v = (uint64_t)i * 0x9E3779B97F4A7C15ull;
        int b;
        for (b = 0; b < 8; b++)
            keys[i][b] = (uint8_t)(v >> (8 * b));
        memcpy(keys[i] + 8, "user:key", 8);
    }
    ketama = ring_of("libketama");
    memc = ring_of("libmemcached");
    native = ring_of("native");
    memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
    for (i = 0; i < NSERVERS; i++) {
        snprintf(host, sizeof host, "10.0.%d.%d", i >> 8, i & 255);
        if (memcached_server_add_with_weight(mc, host, 11211, 1) != MEMCACHED_SUCCESS)
            return 1;
    }
    for (i = 0; i < NKEYS; i++) {
        size_t idx = 0;
        keyroute_ring_get_index(memc, keys[i], 16, &idx);
        if (idx != memcached_generate_hash(mc, (const char *)keys[i], 16))
            mismatches++;
        keyroute_ring_get_index(ketama, keys[i], 16, &idx);
        if (idx != memcached_generate_hash(mc, (const char *)keys[i], 16))
            ketama_differs++;
    }
    printf("keyroute %s vs libmemcached %s: %d servers, %d keys of 16 B, fastest of %d interleaved bursts of %u calls\n",
           keyroute_version(), memcached_lib_version(), NSERVERS, NKEYS, ROUNDS, ITERS);
    printf("keyroute libmemcached profile vs memcached_generate_hash: %d/%d keys differ\n",
           mismatches, NKEYS);

    {
        struct bench bs[6];
        bs[0].label = "keyroute_ring_get (libketama)";
        bs[0].f = op_ring_get;
        bs[0].ctx = ketama;
        bs[1].label = "keyroute_ring_get_index (libketama)";
        bs[1].f = op_ring_index;
        bs[1].ctx = ketama;
        bs[2].label = "keyroute_ring_get (libmemcached profile)";
        bs[2].f = op_ring_get;
        bs[2].ctx = memc;
        bs[3].label = "memcached_generate_hash (KETAMA_WEIGHTED)";
        bs[3].f = op_memcached;
        bs[3].ctx = mc;
        bs[4].label = "keyroute_ring_get (native)";
        bs[4].f = op_ring_get;
        bs[4].ctx = native;
        bs[5].label = "keyroute_key_slot (16 B key)";
        bs[5].f = op_key_slot;
        bs[5].ctx = NULL;
        run(bs, 6);
        t_ketama = bs[0].best;
        t_ketama_index = bs[1].best;
        t_memc_kr = bs[2].best;
        t_mc = bs[3].best;
        t_native = bs[4].best;
        t_slot = bs[5].best;
    }
    printf("ratio memcached_generate_hash / keyroute_ring_get(libketama):     %.2fx\n",
           t_mc / t_ketama);
    printf("ratio memcached_generate_hash / keyroute_ring_get(libmemcached): %.2fx\n",
           t_mc / t_memc_kr);
    printf("keyroute_key_slot: %.2f ns/op; native get: %.2f ns/op\n", t_slot, t_native);
    printf("keyroute libketama profile vs memcached_generate_hash: %d/%d keys differ\n",
           ketama_differs, NKEYS);

    if (json) {
        const char *peer = "libmemcached memcached_generate_hash (KETAMA_WEIGHTED)";
        const char *v = memcached_lib_version();
        struct row rows[5];
        memset(rows, 0, sizeof rows);
        rows[0].id = "c/libmemcached-vs-libmemcached";
        rows[0].group = "Ring lookup";
        rows[0].what = "C keyroute_ring_get, libmemcached profile vs libmemcached's "
                       "memcached_generate_hash, 100 servers, 16 B keys";
        rows[0].keyroute = t_memc_kr;
        rows[0].peer = peer;
        rows[0].peer_version = v;
        rows[0].peer_value = t_mc;
        rows[0].same_answers = mismatches == 0;
        rows[0].like_for_like = 1;
        rows[0].headline = 1;
        rows[0].note = "like for like: the same ketama ring, answers checked identical on every "
                       "key; keyroute also returns the server's name, libmemcached its index";
        rows[1].id = "c/libketama-vs-libmemcached";
        rows[1].group = "Ring lookup";
        rows[1].what = "C keyroute_ring_get, libketama profile vs libmemcached's "
                       "memcached_generate_hash, 100 servers, 16 B keys";
        rows[1].keyroute = t_ketama;
        rows[1].peer = peer;
        rows[1].peer_version = v;
        rows[1].peer_value = t_mc;
        rows[1].same_answers = ketama_differs == 0;
        rows[1].note = "not like for like: libketama's point weighting is not libmemcached's "
                       "(answers compared on every key)";
        rows[2].id = "c/libketama-get-index";
        rows[2].group = "Ring lookup";
        rows[2].what = "C keyroute_ring_get_index, libketama profile, 100 servers, 16 B keys";
        rows[2].keyroute = t_ketama_index;
        rows[3].id = "c/native-get";
        rows[3].group = "Ring lookup";
        rows[3].what = "C keyroute_ring_get, native profile, 100 servers, 16 B keys";
        rows[3].keyroute = t_native;
        rows[4].id = "c/key_slot-16";
        rows[4].group = "Cluster key slot";
        rows[4].what = "C keyroute_key_slot, 16 B key";
        rows[4].keyroute = t_slot;
        for (i = 0; i < 5; i++) {
            rows[i].unit = "ns/call";
            if (!rows[i].peer)
                rows[i].same_answers = -1;
            if (!rows[i].note)
                rows[i].note = "";
        }
        if (write_json(json, rows, 5) != 0) {
            perror(json);
            return 1;
        }
        printf("bench report: 5 rows written to %s\n", json);
    }

    keyroute_ring_free(ketama);
    keyroute_ring_free(memc);
    keyroute_ring_free(native);
    memcached_free(mc);
    return mismatches ? 1 : 0;
}
