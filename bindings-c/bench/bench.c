/*
 * libkeyroute lookups side by side with libmemcached's ketama (KETAMA_WEIGHTED, MD5) on the
 * same 100 servers and the same 4096 16-byte keys as core/benches/ring.rs, plus
 * keyroute_key_slot. `make bench-c` (links the static libkeyroute, -O2).
 *
 * Before timing, every key is checked: keyroute's libmemcached profile must pick the same
 * server index as memcached_generate_hash.
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

int main(void)
{
    keyroute_ring *ketama, *memc, *native;
    memcached_st *mc = memcached_create(NULL);
    char host[64];
    int i, mismatches = 0;
    double t_ketama, t_memc_kr, t_mc, t_native, t_slot;

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

    keyroute_ring_free(ketama);
    keyroute_ring_free(memc);
    keyroute_ring_free(native);
    memcached_free(mc);
    return mismatches ? 1 : 0;
}
