/*
 * C tests of libkeyroute's Redis calls (keyroute_least_used_*, keyroute_leases_*) on a
 * real redis-server, whose URL is in KEYROUTE_TEST_REDIS_URL (tests/with_redis.sh starts
 * a throwaway server and sets it):
 *
 *   with_redis.sh test_redis VECTORS.txt
 *
 * Runs the shared pool sequences (tests/vectors/pool, as lines from vectors_to_lines.py)
 * against the Redis-backed pool, the empty-pool, buffer and error statuses, unreachable
 * servers (KEYROUTE_REDIS within the timeout) and the lease calls.
 * Builds as C99 (-std=c99 -Wall -Wextra -Werror -pedantic) and as C++.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "testing.h"

static long seqs, ops;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- the shared pool sequences on Redis ------------------------------------------------ */

static void run_pool_vectors(const char *url, const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL, *fields[4096], ctx[200] = "", key[64];
    size_t cap = 0, nf;
    keyroute_least_used *lu = NULL;
    uint8_t buf[256];

    if (!f) {
        perror(path);
        exit(2);
    }
    while (read_line(f, &line, &cap)) {
        nf = split(line, fields, sizeof fields / sizeof fields[0]);
        if (nf == 0)
            continue;
        if (strcmp(fields[0], "pool") == 0 && nf >= 2) {
            int kl = snprintf(key, sizeof key, "{keyroute-c}:vectors:%ld", seqs);
            snprintf(ctx, sizeof ctx, "pool %s", fields[1]);
            lu = NULL;
            ST(keyroute_least_used_open(url, B(key), (size_t)kl, 2000, &lu), KEYROUTE_OK);
            seqs++;
        } else if (!lu) {
            continue; /* ring and slot lines */
        } else if (strcmp(fields[0], "seed") == 0) {
            size_t added = 0;
            members ms = members_unhex(fields + 4, nf - 4);
            keyroute_status st = keyroute_least_used_seed(lu, ms.ptrs, ms.lens, ms.n,
                strtoull(fields[1], NULL, 10), atoi(fields[2]), &added);
            if (strcmp(fields[3], "ERR") == 0)
                CHECKD(st == KEYROUTE_BAD_COUNT, ctx);
            else
                CHECKD(st == KEYROUTE_OK && added == (size_t)atol(fields[3]), ctx);
            members_free(ms);
            ops++;
        } else if (strcmp(fields[0], "pick") == 0) {
            size_t gl = 0;
            keyroute_status st = keyroute_least_used_pick(lu, buf, sizeof buf, &gl);
            if (strcmp(fields[1], "NIL") == 0) {
                CHECKD(st == KEYROUTE_EMPTY, ctx);
            } else {
                size_t wl;
                char *w = unhex(fields[1], &wl);
                CHECKD(st == KEYROUTE_OK && gl == wl && memcmp(buf, w, wl) == 0, ctx);
                free(w);
            }
            ops++;
        } else if (strcmp(fields[0], "remove") == 0) {
            size_t ml;
            char *m = unhex(fields[1], &ml);
            uint64_t c = 0;
            keyroute_status st = keyroute_least_used_remove(lu, (const uint8_t *)m, ml, &c);
            if (strcmp(fields[2], "NIL") == 0)
                CHECKD(st == KEYROUTE_UNKNOWN_NODE, ctx);
            else
                CHECKD(st == KEYROUTE_OK && c == strtoull(fields[2], NULL, 10), ctx);
            free(m);
            ops++;
        } else if (strcmp(fields[0], "restore") == 0) {
            size_t ml;
            char *m = unhex(fields[1], &ml);
            uint64_t c = 0;
            int mode = strcmp(fields[2], "keep") == 0 ? KEYROUTE_RESTORE_KEEP
                                                       : KEYROUTE_RESTORE_AT_MINIMUM;
            CHECKD(keyroute_least_used_restore(lu, (const uint8_t *)m, ml, mode, &c) ==
                           KEYROUTE_OK &&
                       c == strtoull(fields[3], NULL, 10),
                   ctx);
            free(m);
            ops++;
        } else if (strcmp(fields[0], "count") == 0) {
            size_t ml;
            char *m = unhex(fields[1], &ml);
            uint64_t c = 0;
            CHECKD(keyroute_least_used_count(lu, (const uint8_t *)m, ml, &c) == KEYROUTE_OK &&
                       c == strtoull(fields[2], NULL, 10),
                   ctx);
            free(m);
        } else if (strcmp(fields[0], "endpool") == 0) {
            keyroute_least_used_free(lu);
            lu = NULL;
        }
        /* "state" and "removed" lines: the C API has no pool length or side-hash read. */
    }
    keyroute_least_used_free(lu);
    free(line);
    fclose(f);
}

/* ---- statuses --------------------------------------------------------------------------- */

static void test_statuses(void)
{
    keyroute_status s[] = {KEYROUTE_REDIS, KEYROUTE_BUFFER_TOO_SMALL, KEYROUTE_BAD_KEY};
    size_t i;
    for (i = 0; i < sizeof s / sizeof s[0]; i++)
        CHECK(strcmp(keyroute_status_str((int32_t)s[i]), "unknown status") != 0);
}

static void test_open_errors(const char *url)
{
    keyroute_least_used *lu = (keyroute_least_used *)&lu; /* must stay untouched */
    keyroute_least_used *sentinel = lu;
    keyroute_leases *le = NULL;
    double t0;

    ST(keyroute_least_used_open(NULL, B("{p}:pool"), 8, 0, &lu), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_open(url, NULL, 8, 0, &lu), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_open(url, B("{p}:pool"), 8, 0, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_open("redis://127.0.0.1:1/\xff", B("{p}:pool"), 8, 0, &lu),
       KEYROUTE_INVALID_UTF8);
    ST(keyroute_least_used_open(url, B(""), 0, 0, &lu), KEYROUTE_BAD_KEY);
    ST(keyroute_least_used_open(url, B("pool}x"), 6, 0, &lu), KEYROUTE_BAD_KEY);
    ST(keyroute_leases_open(url, B(""), 0, 0, &le), KEYROUTE_BAD_KEY);
    ST(keyroute_least_used_open("not a url", B("{p}:pool"), 8, 0, &lu), KEYROUTE_REDIS);
    ST(keyroute_least_used_open("http://127.0.0.1:6379/", B("{p}:pool"), 8, 0, &lu),
       KEYROUTE_REDIS);
    /* Nothing listens on port 1: refused at once. */
    t0 = now_s();
    ST(keyroute_least_used_open("redis://127.0.0.1:1/", B("{p}:pool"), 8, 500, &lu),
       KEYROUTE_REDIS);
    ST(keyroute_leases_open("redis://127.0.0.1:1/", B("{p}:pool"), 8, 500, &le),
       KEYROUTE_REDIS);
    CHECK(now_s() - t0 < 5.0);
    CHECK(lu == sentinel && le == NULL);
}

/* A server that accepts connections (the kernel does, from the backlog) but never
 * answers: open or the first call must give KEYROUTE_REDIS within about the timeout. */
static void test_timeout(void)
{
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    char url[64];
    keyroute_least_used *lu = NULL;
    keyroute_status st;
    size_t len = 0;
    uint8_t buf[16];
    double t0, dt;

    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
        perror("socket");
        exit(2);
    }
    snprintf(url, sizeof url, "redis://127.0.0.1:%u/", (unsigned)ntohs(a.sin_port));
    t0 = now_s();
    st = keyroute_least_used_open(url, B("{p}:pool"), 8, 300, &lu);
    if (st == KEYROUTE_OK) /* the client sent nothing while connecting: the pick waits */
        st = keyroute_least_used_pick(lu, buf, sizeof buf, &len);
    dt = now_s() - t0;
    CHECKD(st == KEYROUTE_REDIS, keyroute_status_str((int32_t)st));
    CHECK(dt < 3.0);
    keyroute_least_used_free(lu);
    close(fd);
}

static void test_least_used(const char *url)
{
    keyroute_least_used *lu = NULL, *other = NULL;
    const uint8_t *members[3];
    size_t lens[3], added = 99, len = 0;
    uint8_t buf[64];
    uint64_t c = 0;
    const char *want[] = {"proxy-a", "proxy-b", "proxy-c", "proxy-a", "proxy-b"};
    size_t i;

    ST(keyroute_least_used_open(url, B("{keyroute-c}:pool"), 17, 0, &lu), KEYROUTE_OK);
    ST(keyroute_least_used_open(url, B("{keyroute-c}:pool"), 17, 1000, &other), KEYROUTE_OK);
    /* Empty (missing) pool: its own status, nothing written. */
    len = 77;
    ST(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_EMPTY);
    CHECK(len == 77);
    ST(keyroute_least_used_pick(lu, NULL, 0, &len), KEYROUTE_EMPTY);

    /* Null pointers. */
    ST(keyroute_least_used_pick(NULL, buf, sizeof buf, &len), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_pick(lu, NULL, sizeof buf, &len), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_pick(lu, buf, sizeof buf, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_seed(NULL, members, lens, 1, 0, 0, &added), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_seed(lu, NULL, lens, 1, 0, 0, &added), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_seed(lu, members, NULL, 1, 0, 0, &added), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_remove(NULL, B("x"), 1, &c), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_remove(lu, NULL, 1, &c), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_restore(NULL, B("x"), 1, KEYROUTE_RESTORE_KEEP, &c),
       KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_restore(lu, NULL, 1, KEYROUTE_RESTORE_KEEP, &c),
       KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_count(lu, B("x"), 1, NULL), KEYROUTE_NULL_ARGUMENT);
    CHECK(added == 99);

    /* Seed (out of order) and pick: lowest count first, ties to the byte-wise smallest. */
    members[0] = B("proxy-c");
    members[1] = B("proxy-a");
    members[2] = B("proxy-b");
    lens[0] = lens[1] = lens[2] = 7;
    ST(keyroute_least_used_seed(lu, members, lens, 3, ((uint64_t)1 << 53) + 1, 0, &added),
       KEYROUTE_BAD_COUNT);
    ST(keyroute_least_used_seed(lu, NULL, NULL, 0, 0, 0, NULL), KEYROUTE_OK);
    ST(keyroute_least_used_seed(lu, members, lens, 3, 5, 0, &added), KEYROUTE_OK);
    CHECK(added == 3);
    ST(keyroute_least_used_seed(lu, members, lens, 2, 0, 0, &added), KEYROUTE_OK);
    CHECK(added == 0); /* already there: counts kept */
    for (i = 0; i < sizeof want / sizeof want[0]; i++) {
        len = 0;
        /* Alternate handles: both see the same pool on the server. */
        ST(keyroute_least_used_pick(i % 2 ? other : lu, buf, sizeof buf, &len), KEYROUTE_OK);
        CHECKD(len == 7 && memcmp(buf, want[i], 7) == 0, want[i]);
    }
    ST(keyroute_least_used_count(lu, B("proxy-a"), 7, &c), KEYROUTE_OK);
    CHECK(c == 7);
    ST(keyroute_least_used_count(lu, B("nope"), 4, &c), KEYROUTE_UNKNOWN_NODE);

    /* Buffer too small: the length needed, and the pick (counted once) is kept for the
     * next call. Now proxy-c (6) is the least used. */
    len = 0;
    ST(keyroute_least_used_pick(lu, buf, 3, &len), KEYROUTE_BUFFER_TOO_SMALL);
    CHECK(len == 7);
    ST(keyroute_least_used_count(lu, B("proxy-c"), 7, &c), KEYROUTE_OK);
    CHECK(c == 7);
    len = 0;
    ST(keyroute_least_used_pick(lu, NULL, 0, &len), KEYROUTE_BUFFER_TOO_SMALL);
    CHECK(len == 7);
    memset(buf, 0, sizeof buf);
    ST(keyroute_least_used_pick(lu, buf, 7, &len), KEYROUTE_OK);
    CHECK(len == 7 && memcmp(buf, "proxy-c", 7) == 0);
    ST(keyroute_least_used_count(lu, B("proxy-c"), 7, &c), KEYROUTE_OK);
    CHECK(c == 7); /* not picked twice */
    ST(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_OK);
    CHECK(len == 7 && memcmp(buf, "proxy-a", 7) == 0); /* a 7 -> 8; b 7, c 7 */

    /* Remove and restore. */
    ST(keyroute_least_used_remove(lu, B("nope"), 4, &c), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_least_used_remove(lu, B("proxy-a"), 7, &c), KEYROUTE_OK);
    CHECK(c == 8);
    ST(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_OK);
    CHECK(len == 7 && memcmp(buf, "proxy-b", 7) == 0); /* b 8 */
    ST(keyroute_least_used_restore(lu, B("proxy-a"), 7, 7, &c), KEYROUTE_BAD_OPTION);
    ST(keyroute_least_used_restore(lu, B("proxy-a"), 7, KEYROUTE_RESTORE_AT_MINIMUM, &c),
       KEYROUTE_OK);
    CHECK(c == 7); /* c is at 7 */
    ST(keyroute_least_used_remove(lu, B("proxy-b"), 7, NULL), KEYROUTE_OK);
    ST(keyroute_least_used_restore(lu, B("proxy-b"), 7, KEYROUTE_RESTORE_KEEP, &c), KEYROUTE_OK);
    CHECK(c == 8);
    ST(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_OK);
    CHECK(len == 7 && memcmp(buf, "proxy-a", 7) == 0);

    /* Empty member names are members like any other. */
    lens[0] = 0;
    members[0] = NULL;
    ST(keyroute_least_used_seed(other, members, lens, 1, 0, 0, &added), KEYROUTE_OK);
    CHECK(added == 1);
    len = 9;
    ST(keyroute_least_used_pick(other, NULL, 0, &len), KEYROUTE_OK);
    CHECK(len == 0);

    keyroute_least_used_free(lu);
    keyroute_least_used_free(other);
    keyroute_least_used_free(NULL);
}

static void test_leases(const char *url)
{
    keyroute_leases *le = NULL;
    const uint8_t *members[2];
    size_t lens[2], added = 0, len = 0, n = 0;
    uint8_t buf[64];
    uint64_t id1 = 0, id2 = 0, id3 = 0, id4 = 0, deadline = 0;
    keyroute_release r = KEYROUTE_RELEASE_EXPIRED;
    struct timespec pause;

    ST(keyroute_leases_open(url, B("{keyroute-c}:busy"), 17, 0, &le), KEYROUTE_OK);
    ST(keyroute_leases_acquire(le, 1000, buf, sizeof buf, &len, &id1, &deadline),
       KEYROUTE_EMPTY);
    ST(keyroute_leases_acquire(NULL, 1000, buf, sizeof buf, &len, &id1, NULL),
       KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_leases_acquire(le, 1000, buf, sizeof buf, NULL, &id1, NULL),
       KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_leases_release(NULL, 1, &r), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_leases_reclaim(NULL, &n), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_leases_seed(le, NULL, lens, 1, &added), KEYROUTE_NULL_ARGUMENT);
    members[0] = B("worker-b");
    members[1] = B("worker-a");
    lens[0] = lens[1] = 8;
    ST(keyroute_leases_seed(le, members, lens, 2, &added), KEYROUTE_OK);
    CHECK(added == 2);
    ST(keyroute_leases_acquire(le, 60000, buf, sizeof buf, &len, &id1, &deadline), KEYROUTE_OK);
    CHECK(len == 8 && memcmp(buf, "worker-a", 8) == 0 && deadline > 1600000000000ULL);
    /* Too small: the lease stays in flight and comes back on the next call. */
    ST(keyroute_leases_acquire(le, 60000, buf, 2, &len, &id2, NULL), KEYROUTE_BUFFER_TOO_SMALL);
    CHECK(len == 8 && id2 == 0);
    ST(keyroute_leases_acquire(le, 60000, buf, sizeof buf, &len, &id2, NULL), KEYROUTE_OK);
    CHECK(len == 8 && memcmp(buf, "worker-b", 8) == 0 && id2 != id1 && id2 != 0);
    ST(keyroute_leases_release(le, id1, &r), KEYROUTE_OK);
    CHECK(r == KEYROUTE_RELEASE_RELEASED);
    ST(keyroute_leases_release(le, id1, &r), KEYROUTE_OK);
    CHECK(r == KEYROUTE_RELEASE_NOT_IN_FLIGHT);
    /* worker-a has none in flight now, worker-b one. */
    ST(keyroute_leases_acquire(le, 1, buf, sizeof buf, &len, &id3, NULL), KEYROUTE_OK);
    CHECK(len == 8 && memcmp(buf, "worker-a", 8) == 0);
    pause.tv_sec = 0;
    pause.tv_nsec = 50 * 1000 * 1000;
    nanosleep(&pause, NULL);
    ST(keyroute_leases_reclaim(le, &n), KEYROUTE_OK);
    CHECK(n == 1);
    ST(keyroute_leases_release(le, id3, &r), KEYROUTE_OK);
    CHECK(r == KEYROUTE_RELEASE_NOT_IN_FLIGHT);
    ST(keyroute_leases_remove(le, B("worker-a"), 8), KEYROUTE_OK);
    ST(keyroute_leases_remove(le, B("worker-a"), 8), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_leases_acquire(le, 60000, buf, sizeof buf, &len, &id4, NULL), KEYROUTE_OK);
    CHECK(len == 8 && memcmp(buf, "worker-b", 8) == 0);
    ST(keyroute_leases_release(le, id2, NULL), KEYROUTE_OK);
    ST(keyroute_leases_release(le, id4, &r), KEYROUTE_OK);
    CHECK(r == KEYROUTE_RELEASE_RELEASED);
    keyroute_leases_free(le);
    keyroute_leases_free(NULL);
}

int main(int argc, char **argv)
{
    const char *url = getenv("KEYROUTE_TEST_REDIS_URL");
    if (!url || !*url) {
        fputs("test_redis: set KEYROUTE_TEST_REDIS_URL (run it through tests/with_redis.sh)\n",
              stderr);
        return 2;
    }
    test_statuses();
    test_open_errors(url);
    test_timeout();
    test_least_used(url);
    test_leases(url);
    if (argc > 1)
        run_pool_vectors(url, argv[1]);
    printf("keyroute C Redis tests (%s, %s): %ld checks, %ld failed; %ld pool sequences "
           "(%ld ops) on Redis\n",
           keyroute_version(), url, checks, failures, seqs, ops);
    if (argc > 1 && seqs == 0) {
        fputs("no pool vectors read\n", stderr);
        return 1;
    }
    return failures ? 1 : 0;
}
