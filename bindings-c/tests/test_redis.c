/*
 * C tests of libkeyroute's Redis calls (keyroute_least_used_*, keyroute_leases_*) on a
 * real redis-server, whose URL is in KEYROUTE_TEST_REDIS_URL (tests/with_redis.sh starts
 * a throwaway server and sets it):
 *
 *   with_redis.sh test_redis VECTORS.txt
 *
 * Runs the shared pool sequences (tests/vectors/pool, as lines from vectors_to_lines.py)
 * against the Redis-backed pool, the empty-pool, buffer and error statuses, and one status
 * per Redis failure with its message: a bad URL, a refused connection, a wrong or missing
 * password (on the password-protected server in KEYROUTE_TEST_REDIS_AUTH_URL, whose
 * password is in KEYROUTE_TEST_REDIS_PASSWORD; it must never appear in a message), a
 * timeout, a peer that is not Redis, a lost connection and WRONGTYPE; then the lease calls.
 *
 *   with_cluster.sh with_redis.sh ... test_redis VECTORS.txt --cluster
 *
 * also opens the handles with keyroute_least_used_open_cluster() and
 * keyroute_leases_open_cluster() on the local 3-master cluster in
 * KEYROUTE_TEST_CLUSTER_SEEDS ("host:port,host:port,..."): their argument statuses (NULL,
 * empty, too many or unusable seeds, a bad pool key), then the same least-used, lease and
 * vector tests as on the standalone server (--cluster-calls: without the vectors), with
 * the seeds given in an order that makes
 * most pools' first call meet a MOVED (the vector pools are spread over every master).
 * Builds as C99 (-std=c99 -Wall -Wextra -Werror -pedantic) and as C++.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testing.h"

static long seqs, ops;

/* With --cluster, the handles of the shared tests open on these seeds instead of a URL. */
static const char *const *g_seeds;
static size_t g_nseeds;

static keyroute_status lu_open(const char *url, const char *key, size_t key_len,
                               uint32_t timeout_ms, keyroute_least_used **out)
{
    return g_nseeds ? keyroute_least_used_open_cluster(g_seeds, g_nseeds, B(key), key_len,
                                                       timeout_ms, out)
                    : keyroute_least_used_open(url, B(key), key_len, timeout_ms, out);
}

static keyroute_status le_open(const char *url, const char *key, size_t key_len,
                               uint32_t timeout_ms, keyroute_leases **out)
{
    return g_nseeds ? keyroute_leases_open_cluster(g_seeds, g_nseeds, B(key), key_len, timeout_ms,
                                                   out)
                    : keyroute_leases_open(url, B(key), key_len, timeout_ms, out);
}

static keyroute_status af_open(const char *url, const char *key, size_t key_len,
                               uint32_t timeout_ms, keyroute_affinity **out)
{
    return g_nseeds ? keyroute_affinity_open_cluster(g_seeds, g_nseeds, B(key), key_len,
                                                     timeout_ms, out)
                    : keyroute_affinity_open(url, B(key), key_len, timeout_ms, out);
}

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
            /* One hash tag per sequence: on a cluster, the pools spread over every master. */
            int kl = snprintf(key, sizeof key, "{keyroute-c:%ld}:vectors", seqs);
            snprintf(ctx, sizeof ctx, "pool %s", fields[1]);
            lu = NULL;
            ST(lu_open(url, key, (size_t)kl, 2000, &lu), KEYROUTE_OK);
            seqs++;
        } else if (!lu) {
            continue; /* ring and slot lines */
        } else if (strcmp(fields[0], "seed") == 0) {
            size_t added = 0;
            members ms = members_unhex(fields + 4, nf - 4);
            keyroute_status st = keyroute_least_used_seed(lu, ms.ptrs, ms.lens, ms.n,
                strtoull(fields[1], NULL, 10), atoi(fields[2]), &added);
            if (fields[3][0] >= 'A' && fields[3][0] <= 'Z') /* refused: its code */
                CHECKD(strcmp(keyroute_status_name((int32_t)st), fields[3]) == 0, ctx);
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
            keyroute_status st = keyroute_least_used_restore(lu, (const uint8_t *)m, ml, mode, &c);
            if (fields[3][0] >= 'A' && fields[3][0] <= 'Z')
                CHECKD(strcmp(keyroute_status_name((int32_t)st), fields[3]) == 0, ctx);
            else
                CHECKD(st == KEYROUTE_OK && c == strtoull(fields[3], NULL, 10), ctx);
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
            ST(keyroute_least_used_free(lu), KEYROUTE_OK);
            lu = NULL;
        }
        /* "state" and "removed" lines: the C API has no pool length or side-hash read. */
    }
    ST(keyroute_least_used_free(lu), KEYROUTE_OK);
    free(line);
    fclose(f);
}

/* ---- a raw Redis client, to set up what the library must then meet ------------------- */

/* The port of a redis://127.0.0.1:PORT/ URL. */
static int port_of(const char *url)
{
    const char *colon = strrchr(url, ':');
    return colon ? atoi(colon + 1) : 0;
}

/* A TCP connection to 127.0.0.1:port, or -1. */
static int dial(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Sends one command (argc words) on fd and reads the reply's first bytes into reply. */
static int send_cmd(int fd, int argc, const char *const *argv, char *reply, size_t cap)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "*%d\r\n", argc), i;
    ssize_t got;
    for (i = 0; i < argc; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "$%u\r\n%s\r\n", (unsigned)strlen(argv[i]),
                      argv[i]);
    if (write(fd, buf, (size_t)n) != n)
        return -1;
    got = read(fd, reply, cap - 1);
    if (got <= 0)
        return -1;
    reply[got] = '\0';
    return 0;
}

/* Runs one command on the server at url (after AUTH when password is not NULL); returns
 * whether the reply is not an error. */
static int redis_do(const char *url, const char *password, int argc, const char *const *argv)
{
    char reply[512];
    int fd = dial(port_of(url)), ok = 0;
    if (fd < 0)
        return 0;
    if (password) {
        const char *auth[2];
        auth[0] = "AUTH";
        auth[1] = password;
        if (send_cmd(fd, 2, auth, reply, sizeof reply) != 0 || reply[0] == '-') {
            close(fd);
            return 0;
        }
    }
    ok = send_cmd(fd, argc, argv, reply, sizeof reply) == 0 && reply[0] != '-';
    close(fd);
    return ok;
}

/* A listening socket on a free 127.0.0.1 port; its URL in url. */
static int listener(char *url, size_t cap)
{
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 16) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
        perror("socket");
        exit(2);
    }
    snprintf(url, cap, "redis://127.0.0.1:%u/", (unsigned)ntohs(a.sin_port));
    return fd;
}

/* ---- statuses --------------------------------------------------------------------------- */

static void test_statuses(void)
{
    keyroute_status s[] = {KEYROUTE_REDIS_BAD_URL, KEYROUTE_REDIS_CONNECT, KEYROUTE_REDIS_AUTH,
                           KEYROUTE_REDIS_TIMEOUT, KEYROUTE_REDIS_CONNECTION_LOST,
                           KEYROUTE_REDIS_WRONGTYPE, KEYROUTE_REDIS_SERVER,
                           KEYROUTE_REDIS_PROTOCOL, KEYROUTE_BUFFER_TOO_SMALL,
                           KEYROUTE_BAD_POOL_KEY, KEYROUTE_BAD_TTL};
    size_t i;
    for (i = 0; i < sizeof s / sizeof s[0]; i++)
        CHECK(strcmp(keyroute_status_name((int32_t)s[i]), "UNKNOWN") != 0);
    CHECK(strcmp(keyroute_status_name(KEYROUTE_REDIS_WRONGTYPE), "REDIS_WRONGTYPE") == 0);
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
       KEYROUTE_BAD_UTF8);
    /* pool keys are checked before connecting (port 1: nothing listens) */
    STM(keyroute_least_used_open("redis://127.0.0.1:1/", B(""), 0, 0, &lu), KEYROUTE_BAD_POOL_KEY,
        "pool key");
    ST(keyroute_least_used_open(url, B("pool}x"), 6, 0, &lu), KEYROUTE_BAD_POOL_KEY);
    ST(keyroute_leases_open(url, B(""), 0, 0, &le), KEYROUTE_BAD_POOL_KEY);
    /* URLs that cannot be used: their own status, nothing sent */
    STM(keyroute_least_used_open("not a url", B("{p}:pool"), 8, 0, &lu), KEYROUTE_REDIS_BAD_URL,
        "not a url");
    ST(keyroute_least_used_open("http://127.0.0.1:6379/", B("{p}:pool"), 8, 0, &lu),
       KEYROUTE_REDIS_BAD_URL);
    ST(keyroute_least_used_open("redis://:s3cr3t-in-url@127.0.0.1:notaport/", B("{p}:pool"), 8, 0,
                                &lu),
       KEYROUTE_REDIS_BAD_URL);
    CHECKD(strstr(keyroute_last_error_message(), "s3cr3t-in-url") == NULL,
           keyroute_last_error_message());
    /* Nothing listens on port 1: refused at once, with where and what. */
    t0 = now_s();
    STM(keyroute_least_used_open("redis://127.0.0.1:1/", B("{p}:pool"), 8, 500, &lu),
        KEYROUTE_REDIS_CONNECT, "127.0.0.1:1");
    STM(keyroute_leases_open("redis://:pw-refused@127.0.0.1:1/", B("{p}:pool"), 8, 500, &le),
        KEYROUTE_REDIS_CONNECT, "127.0.0.1");
    CHECKD(strstr(keyroute_last_error_message(), "pw-refused") == NULL,
           keyroute_last_error_message());
    CHECK(now_s() - t0 < 5.0);
    CHECK(lu == sentinel && le == NULL);
}

/* A server that accepts connections (the kernel does, from the backlog) but never
 * answers: KEYROUTE_REDIS_TIMEOUT, saying so (not "os error 11"). It takes up to twice the
 * timeout today: the redis crate pipelines two CLIENT SETINFO into its handshake and waits
 * out the timeout once per reply (a keyroute-redis matter, reported); the bound below
 * catches anything worse. */
static void test_timeout(void)
{
    char url[64];
    int fd = listener(url, sizeof url);
    keyroute_least_used *lu = NULL;
    keyroute_status st;
    size_t len = 0;
    uint8_t buf[16];
    double t0, dt;

    t0 = now_s();
    st = keyroute_least_used_open(url, B("{p}:pool"), 8, 1000, &lu);
    if (st == KEYROUTE_OK) /* the client sent nothing while connecting: the pick waits */
        st = keyroute_least_used_pick(lu, buf, sizeof buf, &len);
    dt = now_s() - t0;
    CHECKD(st == KEYROUTE_REDIS_TIMEOUT, keyroute_status_name((int32_t)st));
    CHECKD(strstr(keyroute_last_error_message(), "timed out") != NULL,
           keyroute_last_error_message());
    CHECKD(strstr(keyroute_last_error_message(), "os error") == NULL,
           keyroute_last_error_message());
    {
        char t[64];
        snprintf(t, sizeof t, "took %.3f s for a 1 s timeout", dt);
        CHECKD(dt > 0.9 && dt < 2.6, t);
    }
    ST(keyroute_least_used_free(lu), KEYROUTE_OK);
    close(fd);
}

/* A peer that answers, but not in Redis' protocol (a web server): KEYROUTE_REDIS_PROTOCOL. */
static void test_not_redis(void)
{
    char url[64];
    int fd = listener(url, sizeof url), status = 0;
    keyroute_least_used *lu = NULL;
    keyroute_status st;
    size_t len = 0;
    uint8_t buf[16];
    pid_t child = fork();

    if (child < 0) {
        perror("fork");
        exit(2);
    }
    if (child == 0) { /* answers every connection like a web server, then closes it */
        const char *http = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
        int i;
        for (i = 0; i < 4; i++) {
            char in[512];
            int c = accept(fd, NULL, NULL);
            if (c < 0)
                break;
            if (read(c, in, sizeof in) > 0 && write(c, http, strlen(http)) < 0)
                _exit(1);
            close(c);
        }
        _exit(0);
    }
    close(fd);
    st = keyroute_least_used_open(url, B("{p}:pool"), 8, 2000, &lu);
    if (st == KEYROUTE_OK)
        st = keyroute_least_used_pick(lu, buf, sizeof buf, &len);
    CHECKD(st == KEYROUTE_REDIS_PROTOCOL,
           keyroute_status_name((int32_t)st));
    CHECKD(strstr(keyroute_last_error_message(), "Redis") != NULL,
           keyroute_last_error_message());
    ST(keyroute_least_used_free(lu), KEYROUTE_OK);
    kill(child, SIGTERM);
    waitpid(child, &status, 0);
}

/* The password-protected server: a missing or wrong password is KEYROUTE_REDIS_AUTH and
 * the password never appears in a message; the right one works. */
static void test_auth(const char *auth_url, const char *password)
{
    char url[256], wrong[256];
    const char *port = strrchr(auth_url, ':');
    keyroute_least_used *lu = NULL;
    keyroute_status st;
    const uint8_t *m[1];
    size_t l[1], len = 0;
    uint8_t buf[32];

    if (!port) {
        CHECKD(0, "KEYROUTE_TEST_REDIS_AUTH_URL");
        return;
    }
    snprintf(url, sizeof url, "redis://:%s@127.0.0.1%s", password, port);
    snprintf(wrong, sizeof wrong, "redis://:%s-wrong@127.0.0.1%s", password, port);

    /* No password: the connection opens, the first command is refused (NOAUTH). */
    st = keyroute_least_used_open(auth_url, B("{a}:pool"), 8, 2000, &lu);
    if (st == KEYROUTE_OK)
        st = keyroute_least_used_pick(lu, buf, sizeof buf, &len);
    CHECKD(st == KEYROUTE_REDIS_AUTH, keyroute_status_name((int32_t)st));
    CHECKD(strstr(keyroute_last_error_message(), "credentials") != NULL ||
               strstr(keyroute_last_error_message(), "NOAUTH") != NULL,
           keyroute_last_error_message());
    ST(keyroute_least_used_free(lu), KEYROUTE_OK);
    lu = NULL;

    /* A wrong password: refused when connecting; the message shows neither password. */
    STM(keyroute_least_used_open(wrong, B("{a}:pool"), 8, 2000, &lu), KEYROUTE_REDIS_AUTH,
        "127.0.0.1");
    CHECKD(strstr(keyroute_last_error_message(), password) == NULL,
           keyroute_last_error_message());
    CHECK(lu == NULL);

    /* The right one. */
    ST(keyroute_least_used_open(url, B("{a}:pool"), 8, 2000, &lu), KEYROUTE_OK);
    m[0] = B("proxy-a");
    l[0] = 7;
    ST(keyroute_least_used_seed(lu, m, l, 1, 0, 1, NULL), KEYROUTE_OK);
    ST(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_OK);
    CHECK(len == 7 && memcmp(buf, "proxy-a", 7) == 0);
    /* The server now wants another password: the handle's next reconnect is refused. */
    {
        const char *kill_all[] = {"CLIENT", "KILL", "TYPE", "normal"};
        const char *cfg[] = {"CONFIG", "SET", "requirepass", "kr-other-password"};
        CHECK(redis_do(auth_url, password, 4, cfg));
        CHECK(redis_do(auth_url, "kr-other-password", 4, kill_all));
        st = keyroute_least_used_pick(lu, buf, sizeof buf, &len); /* the killed connection */
        CHECKD(st == KEYROUTE_REDIS_CONNECTION_LOST || st == KEYROUTE_REDIS_AUTH,
               keyroute_status_name((int32_t)st));
        STM(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_REDIS_AUTH, "redis");
        CHECKD(strstr(keyroute_last_error_message(), password) == NULL,
               keyroute_last_error_message());
        cfg[3] = password;
        CHECK(redis_do(auth_url, "kr-other-password", 4, cfg));
    }
    ST(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_OK); /* reconnected */
    ST(keyroute_least_used_free(lu), KEYROUTE_OK);
}

/* A key of another type: KEYROUTE_REDIS_WRONGTYPE, and the script changed nothing. A
 * connection killed by the server: KEYROUTE_REDIS_CONNECTION_LOST, then a reconnect. */
static void test_wrongtype_and_lost(const char *url)
{
    keyroute_least_used *lu = NULL;
    keyroute_leases *le = NULL;
    const char *set[] = {"SET", "{w}:pool", "a string"};
    const char *kill_all[] = {"CLIENT", "KILL", "TYPE", "normal"};
    const uint8_t *m[1];
    size_t l[1], len = 0;
    uint8_t buf[32];
    uint64_t c = 0;

    CHECK(redis_do(url, NULL, 3, set));
    ST(keyroute_least_used_open(url, B("{w}:pool"), 8, 0, &lu), KEYROUTE_OK);
    STM(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_REDIS_WRONGTYPE,
        "WRONGTYPE");
    m[0] = B("proxy-a");
    l[0] = 7;
    ST(keyroute_least_used_seed(lu, m, l, 1, 0, 0, NULL), KEYROUTE_REDIS_WRONGTYPE);
    ST(keyroute_least_used_restore(lu, m[0], 7, KEYROUTE_RESTORE_KEEP, &c),
       KEYROUTE_REDIS_WRONGTYPE);
    ST(keyroute_least_used_count(lu, m[0], 7, &c), KEYROUTE_REDIS_WRONGTYPE);
    ST(keyroute_leases_open(url, B("{w}:pool"), 8, 0, &le), KEYROUTE_OK);
    ST(keyroute_leases_seed(le, m, l, 1, NULL), KEYROUTE_REDIS_WRONGTYPE);
    ST(keyroute_leases_free(le), KEYROUTE_OK);
    {
        const char *get[] = {"GET", "{w}:pool"};
        char reply[64];
        int fd = dial(port_of(url));
        CHECK(fd >= 0 && send_cmd(fd, 2, get, reply, sizeof reply) == 0 &&
              strstr(reply, "a string") != NULL); /* untouched */
        if (fd >= 0)
            close(fd);
    }
    ST(keyroute_least_used_free(lu), KEYROUTE_OK);

    /* lost connection */
    ST(keyroute_least_used_open(url, B("{lost}:pool"), 11, 0, &lu), KEYROUTE_OK);
    ST(keyroute_least_used_seed(lu, m, l, 1, 0, 1, NULL), KEYROUTE_OK);
    CHECK(redis_do(url, NULL, 4, kill_all));
    STM(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_REDIS_CONNECTION_LOST,
        "may or may not");
    ST(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_OK); /* reconnected */
    CHECK(len == 7);
    ST(keyroute_least_used_free(lu), KEYROUTE_OK);
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

    ST(lu_open(url, "{keyroute-c}:pool", 17, 0, &lu), KEYROUTE_OK);
    ST(lu_open(url, "{keyroute-c}:pool", 17, 1000, &other), KEYROUTE_OK);
    /* Empty (missing) pool: its own status, nothing written. */
    len = 77;
    ST(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_EMPTY);
    CHECK(len == 77);
    ST(keyroute_least_used_pick(lu, NULL, 0, &len), KEYROUTE_EMPTY);

    /* Null pointers. */
    ST(keyroute_least_used_pick(NULL, buf, sizeof buf, &len), KEYROUTE_NULL_ARGUMENT);
    STM(keyroute_least_used_pick(lu, NULL, sizeof buf, &len), KEYROUTE_NULL_ARGUMENT, "`buf`");
    ST(keyroute_least_used_pick(lu, buf, sizeof buf, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_seed(NULL, members, lens, 1, 0, 0, &added), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_seed(lu, NULL, lens, 1, 0, 0, &added), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_seed(lu, members, NULL, 1, 0, 0, &added), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_seed(lu, members, lens, SIZE_MAX, 0, 0, &added), KEYROUTE_TOO_LARGE);
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
    STM(keyroute_least_used_seed(lu, members, lens, 3, ((uint64_t)1 << 53) + 1, 0, &added),
        KEYROUTE_BAD_COUNT, "2^53");
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
    STM(keyroute_least_used_count(lu, B("nope"), 4, &c), KEYROUTE_UNKNOWN_NODE, "not in the pool");

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
    STM(keyroute_least_used_remove(lu, B("nope"), 4, &c), KEYROUTE_UNKNOWN_NODE, "\"nope\"");
    ST(keyroute_least_used_remove(lu, B("proxy-a"), 7, &c), KEYROUTE_OK);
    CHECK(c == 8);
    ST(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_OK);
    CHECK(len == 7 && memcmp(buf, "proxy-b", 7) == 0); /* b 8 */
    STM(keyroute_least_used_restore(lu, B("proxy-a"), 7, 7, &c), KEYROUTE_BAD_RESTORE_MODE,
        "restore mode");
    ST(keyroute_least_used_restore(lu, B("proxy-a"), 7, KEYROUTE_RESTORE_AT_MINIMUM, &c),
       KEYROUTE_OK);
    CHECK(c == 7); /* c is at 7 */
    ST(keyroute_least_used_remove(lu, B("proxy-b"), 7, NULL), KEYROUTE_OK);
    ST(keyroute_least_used_restore(lu, B("proxy-b"), 7, KEYROUTE_RESTORE_KEEP, &c), KEYROUTE_OK);
    CHECK(c == 8);
    ST(keyroute_least_used_pick(lu, buf, sizeof buf, &len), KEYROUTE_OK);
    CHECK(len == 7 && memcmp(buf, "proxy-a", 7) == 0);

    /* Empty members are refused (nothing sent): a worker handed "" could reach nothing. */
    lens[0] = 0;
    members[0] = NULL;
    added = 42;
    STM(keyroute_least_used_seed(other, members, lens, 1, 0, 0, &added), KEYROUTE_EMPTY_MEMBER,
        "empty");
    CHECK(added == 42);
    ST(keyroute_least_used_restore(other, NULL, 0, KEYROUTE_RESTORE_KEEP, &c),
       KEYROUTE_EMPTY_MEMBER);

    /* the wrong kind of handle */
    ST(keyroute_leases_free((keyroute_leases *)lu), KEYROUTE_INVALID_HANDLE);
    ST(keyroute_least_used_free(lu), KEYROUTE_OK);
    ST(keyroute_least_used_free(other), KEYROUTE_OK);
    ST(keyroute_least_used_free(NULL), KEYROUTE_OK);
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

    ST(le_open(url, "{keyroute-c}:busy", 17, 0, &le), KEYROUTE_OK);
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
    members[1] = B("");
    lens[0] = 8;
    lens[1] = 0;
    ST(keyroute_leases_seed(le, members, lens, 2, &added), KEYROUTE_EMPTY_MEMBER);
    members[1] = B("worker-a");
    lens[1] = 8;
    ST(keyroute_leases_seed(le, members, lens, 2, &added), KEYROUTE_OK);
    CHECK(added == 2);
    /* A TTL of 0 (an expired lease) or above 2^53 ms: refused, nothing sent. */
    id1 = 77;
    STM(keyroute_leases_acquire(le, 0, buf, sizeof buf, &len, &id1, &deadline), KEYROUTE_BAD_TTL,
        "TTL");
    ST(keyroute_leases_acquire(le, ((uint64_t)1 << 53) + 1, buf, sizeof buf, &len, &id1, NULL),
       KEYROUTE_BAD_TTL);
    ST(keyroute_leases_acquire(le, UINT64_MAX, buf, sizeof buf, &len, &id1, NULL),
       KEYROUTE_BAD_TTL);
    CHECK(id1 == 77);
    ST(keyroute_leases_acquire(le, 60000, buf, sizeof buf, &len, &id1, &deadline), KEYROUTE_OK);
    CHECK(len == 8 && memcmp(buf, "worker-a", 8) == 0 && deadline > 1600000000000ULL);
    /* Too small: the lease stays in flight and comes back on the next call. */
    ST(keyroute_leases_acquire(le, 60000, buf, 2, &len, &id2, NULL), KEYROUTE_BUFFER_TOO_SMALL);
    CHECK(len == 8 && id2 == 0);
    ST(keyroute_leases_acquire(le, 0, buf, sizeof buf, &len, &id2, NULL), KEYROUTE_BAD_TTL);
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
    STM(keyroute_leases_remove(le, B("worker-a"), 8), KEYROUTE_UNKNOWN_NODE, "lease pool");
    ST(keyroute_leases_acquire(le, 60000, buf, sizeof buf, &len, &id4, NULL), KEYROUTE_OK);
    CHECK(len == 8 && memcmp(buf, "worker-b", 8) == 0);
    ST(keyroute_leases_release(le, id2, NULL), KEYROUTE_OK);
    ST(keyroute_leases_release(le, id4, &r), KEYROUTE_OK);
    CHECK(r == KEYROUTE_RELEASE_RELEASED);
    ST(keyroute_least_used_free((keyroute_least_used *)le), KEYROUTE_INVALID_HANDLE);
    ST(keyroute_leases_free(le), KEYROUTE_OK);
    ST(keyroute_leases_free(NULL), KEYROUTE_OK);
}

/* Affinity with a cap: a take goes to the holder or the first candidate under the cap,
 * the bad arguments are refused before anything is sent, a release frees an item once. */
static void test_affinity(const char *url)
{
    keyroute_affinity *af = NULL;
    const uint8_t *cands[3] = {B("node-a"), B("node-b"), B("")};
    size_t lens[3] = {6, 6, 0}, index = 99, len = 0;
    uint64_t load = 0, cap = 0;
    uint8_t isnew = 9, released = 9, buf[16];

    ST(af_open(url, "{keyroute-c}:aff", 16, 0, &af), KEYROUTE_OK);
    ST(keyroute_affinity_take(af, B("job-1"), 5, cands, lens, 2, 1, 0, &index, &load, &cap,
                              &isnew),
       KEYROUTE_OK);
    CHECK(index == 0 && load == 1 && cap == 1 && isnew == 1);
    /* Held already: the same node, nothing changed. */
    ST(keyroute_affinity_take(af, B("job-1"), 5, cands + 1, lens + 1, 1, 1, 0, &index, &load,
                              NULL, &isnew),
       KEYROUTE_OK);
    CHECK(index == SIZE_MAX && isnew == 0);
    ST(keyroute_affinity_holder(af, B("job-1"), 5, buf, sizeof buf, &len), KEYROUTE_OK);
    CHECK(len == 6 && memcmp(buf, "node-a", 6) == 0);
    ST(keyroute_affinity_holder(af, B("job-1"), 5, buf, 2, &len), KEYROUTE_BUFFER_TOO_SMALL);
    CHECK(len == 6);
    ST(keyroute_affinity_take(af, B("job-2"), 5, cands, lens, 2, 1, 0, &index, NULL, NULL, NULL),
       KEYROUTE_OK);
    CHECK(index == 1);
    /* Every candidate at the cap: nothing to take. */
    ST(keyroute_affinity_take(af, B("job-3"), 5, cands, lens, 2, 1, 0, &index, NULL, NULL, NULL),
       KEYROUTE_EMPTY);
    ST(keyroute_affinity_holder(af, B("job-3"), 5, buf, sizeof buf, &len), KEYROUTE_EMPTY);
    /* The factor rule: ceil(1.5 * (2 + 1) / 2) = 3. */
    ST(keyroute_affinity_take(af, B("job-3"), 5, cands, lens, 2, 0, 1.5, &index, &load, &cap,
                              NULL),
       KEYROUTE_OK);
    CHECK(index == 0 && load == 2 && cap == 3);
    /* Refused before anything is sent. */
    ST(keyroute_affinity_take(af, B("job-4"), 5, cands, lens, 3, 1, 0, &index, NULL, NULL, NULL),
       KEYROUTE_EMPTY_MEMBER);
    ST(keyroute_affinity_take(af, B(""), 0, cands, lens, 2, 1, 0, &index, NULL, NULL, NULL),
       KEYROUTE_EMPTY_MEMBER);
    ST(keyroute_affinity_take(af, B("job-4"), 5, cands, lens, 0, 1, 0, &index, NULL, NULL, NULL),
       KEYROUTE_OUT_OF_RANGE);
    ST(keyroute_affinity_take(af, B("job-4"), 5, cands, lens, 2, 0, 0.5, &index, NULL, NULL,
                              NULL),
       KEYROUTE_OUT_OF_RANGE);
    ST(keyroute_affinity_take(af, B("job-4"), 5, cands, lens, 2, ((uint64_t)1 << 53) + 1, 0,
                              &index, NULL, NULL, NULL),
       KEYROUTE_OUT_OF_RANGE);
    ST(keyroute_affinity_take(af, B("job-4"), 5, cands, lens, (size_t)1 << 17, 1, 0, &index, NULL,
                              NULL, NULL),
       KEYROUTE_TOO_LARGE);
    ST(keyroute_affinity_take(af, B("job-4"), 5, NULL, lens, 2, 1, 0, &index, NULL, NULL, NULL),
       KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_affinity_take(af, B("job-4"), 5, cands, lens, 2, 1, 0, NULL, NULL, NULL, NULL),
       KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_affinity_holder(af, B("job-4"), 5, buf, sizeof buf, &len), KEYROUTE_EMPTY);
    /* Release once. */
    ST(keyroute_affinity_release(af, B("job-1"), 5, &released), KEYROUTE_OK);
    CHECK(released == 1);
    ST(keyroute_affinity_release(af, B("job-1"), 5, &released), KEYROUTE_OK);
    CHECK(released == 0);
    ST(keyroute_affinity_release(af, B(""), 0, &released), KEYROUTE_EMPTY_MEMBER);
    ST(keyroute_affinity_release(af, B("job-2"), 5, NULL), KEYROUTE_OK);
    ST(keyroute_affinity_release(af, B("job-3"), 5, NULL), KEYROUTE_OK);
    ST(keyroute_leases_free((keyroute_leases *)af), KEYROUTE_INVALID_HANDLE);
    ST(keyroute_affinity_free(af), KEYROUTE_OK);
    ST(keyroute_affinity_free(NULL), KEYROUTE_OK);
}

/* keyroute_*_open_cluster(): argument statuses, checked before anything is sent; the
 * handle pointer is written only on success. */
static void test_open_cluster_errors(const char *const *seeds, size_t nseeds)
{
    keyroute_least_used *lu = NULL;
    keyroute_leases *le = NULL;
    const char *bad[2];
    const char *dead[1];
    double t0;

    ST(keyroute_least_used_open_cluster(NULL, 0, B("{p}:pool"), 8, 0, &lu),
       KEYROUTE_CLUSTER_UNREACHABLE);
    ST(keyroute_leases_open_cluster(seeds, 0, B("{p}:busy"), 8, 0, &le),
       KEYROUTE_CLUSTER_UNREACHABLE);
    STM(keyroute_least_used_open_cluster(NULL, 1, B("{p}:pool"), 8, 0, &lu),
        KEYROUTE_NULL_ARGUMENT, "seeds");
    ST(keyroute_least_used_open_cluster(seeds, SIZE_MAX, B("{p}:pool"), 8, 0, &lu),
       KEYROUTE_TOO_LARGE);
    ST(keyroute_leases_open_cluster(seeds, SIZE_MAX / 2, B("{p}:busy"), 8, 0, &le),
       KEYROUTE_TOO_LARGE);
    bad[0] = seeds[0];
    bad[1] = NULL;
    STM(keyroute_least_used_open_cluster(bad, 2, B("{p}:pool"), 8, 0, &lu),
        KEYROUTE_NULL_ARGUMENT, "seeds[1]");
    bad[1] = "127.0.0.1:7000\xff";
    ST(keyroute_leases_open_cluster(bad, 2, B("{p}:busy"), 8, 0, &le), KEYROUTE_BAD_UTF8);
    bad[1] = "redis://:s3cr3t-seed@127.0.0.1:notaport";
    ST(keyroute_least_used_open_cluster(bad, 2, B("{p}:pool"), 8, 0, &lu),
       KEYROUTE_REDIS_BAD_URL);
    CHECKD(strstr(keyroute_last_error_message(), "s3cr3t-seed") == NULL,
           keyroute_last_error_message());
    ST(keyroute_least_used_open_cluster(seeds, nseeds, NULL, 8, 0, &lu), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_least_used_open_cluster(seeds, nseeds, B("{p}:pool"), 8, 0, NULL),
       KEYROUTE_NULL_ARGUMENT);
    /* The pool key is checked before anything is sent (no node listens on port 1). */
    dead[0] = "127.0.0.1:1";
    ST(keyroute_least_used_open_cluster(dead, 1, B(""), 0, 0, &lu), KEYROUTE_BAD_POOL_KEY);
    ST(keyroute_leases_open_cluster(dead, 1, B("pool}x"), 6, 0, &le), KEYROUTE_BAD_POOL_KEY);
    /* No node answers: its own status, quickly. */
    t0 = now_s();
    STM(keyroute_least_used_open_cluster(dead, 1, B("{p}:pool"), 8, 300, &lu),
        KEYROUTE_CLUSTER_UNREACHABLE, "127.0.0.1:1");
    ST(keyroute_leases_open_cluster(dead, 1, B("{p}:busy"), 8, 300, &le),
       KEYROUTE_CLUSTER_UNREACHABLE);
    CHECK(now_s() - t0 < 5.0);
    CHECK(lu == NULL && le == NULL);
    /* A dead seed first, then a live one: the topology comes from the live one. */
    bad[0] = "127.0.0.1:1";
    bad[1] = seeds[nseeds - 1];
    ST(keyroute_least_used_open_cluster(bad, 2, B("{p}:pool"), 8, 300, &lu), KEYROUTE_OK);
    CHECK(lu != NULL);
    ST(keyroute_leases_free((keyroute_leases *)lu), KEYROUTE_INVALID_HANDLE);
    ST(keyroute_least_used_free(lu), KEYROUTE_OK);
}

static size_t split_seeds(char *list, const char **seeds, size_t max)
{
    size_t n = 0;
    char *p = list;
    while (p && *p && n < max) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        seeds[n++] = p;
        p = comma ? comma + 1 : NULL;
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *url = getenv("KEYROUTE_TEST_REDIS_URL");
    const char *auth_url = getenv("KEYROUTE_TEST_REDIS_AUTH_URL");
    const char *password = getenv("KEYROUTE_TEST_REDIS_PASSWORD");
    const char *cluster_env = getenv("KEYROUTE_TEST_CLUSTER_SEEDS");
    /* --cluster-calls: the cluster handles without the vectors (valgrind: 2 min less). */
    int cluster_vectors = argc > 2 && strcmp(argv[2], "--cluster") == 0;
    int cluster = cluster_vectors || (argc > 2 && strcmp(argv[2], "--cluster-calls") == 0);
    if (!url || !*url || !auth_url || !*auth_url || !password || !*password ||
        (cluster && (!cluster_env || !*cluster_env))) {
        fputs("test_redis: set KEYROUTE_TEST_REDIS_URL, KEYROUTE_TEST_REDIS_AUTH_URL and "
              "KEYROUTE_TEST_REDIS_PASSWORD (run it through tests/with_redis.sh twice: "
              "with_redis.sh --password --var KEYROUTE_TEST_REDIS_AUTH_URL with_redis.sh "
              "test_redis), and with --cluster KEYROUTE_TEST_CLUSTER_SEEDS (with_cluster.sh)\n",
              stderr);
        return 2;
    }
    test_statuses();
    test_open_errors(url);
    test_timeout();
    test_not_redis();
    test_auth(auth_url, password);
    test_wrongtype_and_lost(url);
    test_least_used(url);
    test_leases(url);
    test_affinity(url);
    if (argc > 1)
        run_pool_vectors(url, argv[1]);
    if (cluster) {
        /* The seeds in reverse order: the first is rarely the owner of a pool's slot. */
        char *copy = (char *)xmalloc(strlen(cluster_env) + 1);
        const char *fwd[16], *rev[16];
        size_t n, i;
        strcpy(copy, cluster_env);
        n = split_seeds(copy, fwd, 16);
        for (i = 0; i < n; i++)
            rev[i] = fwd[n - 1 - i];
        test_open_cluster_errors(rev, n);
        g_seeds = rev;
        g_nseeds = n;
        test_least_used(NULL);
        test_leases(NULL);
        test_affinity(NULL);
        if (cluster_vectors)
            run_pool_vectors(NULL, argv[1]);
        g_seeds = NULL;
        g_nseeds = 0;
        free(copy);
    }
    printf("keyroute C Redis tests (%s, %s%s): %ld checks, %ld failed; %ld pool sequences "
           "(%ld ops) on Redis\n",
           keyroute_version(), url, cluster ? ", and a 3-master cluster" : "", checks, failures,
           seqs, ops);
    if (argc > 1 && seqs == 0) {
        fputs("no pool vectors read\n", stderr);
        return 1;
    }
    return failures ? 1 : 0;
}
