/*
 * keyroute from C: route keys on two ketama-family rings and compute Redis Cluster slots.
 *
 *   cc -std=c99 route.c $(pkg-config --cflags --libs keyroute) -o route && ./route
 *
 * If the library is not in a directory the loader searches, add an rpath:
 *   cc -std=c99 route.c $(pkg-config --cflags --libs keyroute) \
 *      -Wl,-rpath,"$(pkg-config --variable=libdir keyroute)" -o route
 *
 * Output lines (checked against tests/vectors by `make test-c`):
 *   ring PROFILE NODE=WEIGHT...      route PROFILE KEY NODE      slot KEY SLOT
 * A failing call is reported with its status's name (the error code every language
 * reports, e.g. ZERO_WEIGHT) and keyroute_last_error_message().
 */
#include <stdio.h>
#include <string.h>

#include <keyroute.h>

struct node {
    const char *name;
    long weight;
};

static const char *const keys[] = {"test", "apple", "foo", "bar", "key-0", "key-1", "key-2"};
#define NKEYS (sizeof keys / sizeof keys[0])

/* Prints why `what` failed; returns 1. */
static int fail(const char *what, keyroute_status st)
{
    fprintf(stderr, "%s: %s: %s\n", what, keyroute_status_name(st), keyroute_last_error_message());
    return 1;
}

/* Builds a ring, prints where each key goes; returns 0 on success. */
static int route(const char *profile, const struct node *nodes, size_t n)
{
    keyroute_ring *ring = NULL;
    keyroute_status st;
    size_t i;

    st = keyroute_ring_new(profile, NULL, &ring);
    if (st != KEYROUTE_OK)
        return fail("keyroute_ring_new", st);
    printf("ring %s", profile);
    for (i = 0; i < n; i++) {
        st = keyroute_ring_add(ring, nodes[i].name, nodes[i].weight);
        if (st != KEYROUTE_OK) {
            keyroute_ring_free(ring);
            return fail("keyroute_ring_add", st);
        }
        printf(" %s=%ld", nodes[i].name, nodes[i].weight);
    }
    printf("\n");
    for (i = 0; i < NKEYS; i++) {
        const char *node; /* borrowed from the ring: valid until it is modified or freed */
        size_t len;
        st = keyroute_ring_get(ring, (const uint8_t *)keys[i], strlen(keys[i]), &node, &len);
        if (st == KEYROUTE_EMPTY) {
            printf("# %s: no node (empty ring), make no request\n", keys[i]);
        } else if (st != KEYROUTE_OK) {
            keyroute_ring_free(ring);
            return fail("keyroute_ring_get", st);
        } else {
            printf("route %s %s %.*s\n", profile, keys[i], (int)len, node);
        }
    }
    return keyroute_ring_free(ring) == KEYROUTE_OK ? 0 : 1;
}

int main(void)
{
    static const struct node memcached[] = {
        {"127.0.0.1:11211", 600}, {"127.0.0.1:11212", 400}};
    static const struct node cluster[] = {
        {"10.0.0.1:11211", 1}, {"10.0.0.2:11211", 1}, {"10.0.0.3:11211", 1}};
    static const char *const slot_keys[] = {"foo", "bar", "123456789", "{a}{b}", "x{y}z",
                                            "foo{bar}{zap}"};
    size_t i;

    printf("# keyroute %s (header %s)\n", keyroute_version(), KEYROUTE_VERSION_STRING);
    if (route("libketama", memcached, 2) || route("libmemcached", cluster, 3))
        return 1;
    for (i = 0; i < sizeof slot_keys / sizeof slot_keys[0]; i++)
        printf("slot %s %u\n", slot_keys[i],
               (unsigned)keyroute_key_slot((const uint8_t *)slot_keys[i], strlen(slot_keys[i])));
    return 0;
}
