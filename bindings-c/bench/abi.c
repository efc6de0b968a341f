/*
 * The C entry points counted in instructions (callgrind), for `make bench-c-callgrind`:
 * `abi_c OP PROFILE N` calls OP N times over the 4096 16-byte keys of bench.c (and
 * core/benches/ring.rs), from one function per OP named `loop_<OP>`, which callgrind
 * is told to count (--toggle-collect=loop_*). bindings-c/bench/abi.rs does the same with
 * the Rust calls these functions wrap; bindings-c/bench/callgrind.py runs both and
 * reports the difference per call, which is the cost of the C boundary (argument checks,
 * the panic guard, the status, the PLT call into libkeyroute.so).
 *
 * OP: ring_get | ring_get_index | key_slot. PROFILE: a ring profile (ignored by key_slot).
 * Linked against the shared libkeyroute, as a C caller normally is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keyroute.h>

#define NKEYS 4096
#define NSERVERS 100

static uint8_t keys[NKEYS][16];
static volatile uint64_t sink;

__attribute__((noinline)) uint64_t loop_ring_get(const keyroute_ring *r, size_t n)
{
    uint64_t acc = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        const char *node = NULL;
        size_t len = 0;
        keyroute_ring_get(r, keys[i & (NKEYS - 1)], 16, &node, &len);
        acc += len;
    }
    return acc;
}

__attribute__((noinline)) uint64_t loop_ring_get_index(const keyroute_ring *r, size_t n)
{
    uint64_t acc = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        size_t idx = 0;
        keyroute_ring_get_index(r, keys[i & (NKEYS - 1)], 16, &idx);
        acc += idx;
    }
    return acc;
}

__attribute__((noinline)) uint64_t loop_key_slot(size_t n)
{
    uint64_t acc = 0;
    size_t i;
    for (i = 0; i < n; i++)
        acc += keyroute_key_slot(keys[i & (NKEYS - 1)], 16);
    return acc;
}

int main(int argc, char **argv)
{
    keyroute_ring *r = NULL;
    char name[64];
    char *end = NULL;
    unsigned long n;
    int i;

    if (argc != 4) {
        fprintf(stderr, "usage: %s ring_get|ring_get_index|key_slot PROFILE N\n", argv[0]);
        return 2;
    }
    n = strtoul(argv[3], &end, 10);
    if (end == argv[3] || *end != '\0' || n == 0 || n > 100000000ul) {
        fprintf(stderr, "N must be 1..=100000000\n");
        return 2;
    }
    for (i = 0; i < NKEYS; i++) {
        uint64_t v = (uint64_t)i * 0x9E3779B97F4A7C15ull;
        int b;
        for (b = 0; b < 8; b++)
            keys[i][b] = (uint8_t)(v >> (8 * b));
        memcpy(keys[i] + 8, "user:key", 8);
    }
    if (strcmp(argv[1], "key_slot") == 0) {
        sink = loop_key_slot(n);
        return 0;
    }
    if (keyroute_ring_new(argv[2], NULL, &r) != KEYROUTE_OK) {
        fprintf(stderr, "unknown profile %s\n", argv[2]);
        return 2;
    }
    for (i = 0; i < NSERVERS; i++) {
        snprintf(name, sizeof name, "10.0.%d.%d:11211", i >> 8, i & 255);
        if (keyroute_ring_add(r, name, 1) != KEYROUTE_OK)
            return 1;
    }
    if (strcmp(argv[1], "ring_get") == 0)
        sink = loop_ring_get(r, n);
    else if (strcmp(argv[1], "ring_get_index") == 0)
        sink = loop_ring_get_index(r, n);
    else {
        fprintf(stderr, "unknown op %s\n", argv[1]);
        keyroute_ring_free(r);
        return 2;
    }
    keyroute_ring_free(r);
    return 0;
}
