/*
 * C tests of libkeyroute's smart cache, sessions and devices (keyroute_cache_*,
 * keyroute_sessions_*, keyroute_devices_*) on real Redis:
 *
 *   with_redis.sh --password --var KEYROUTE_TEST_REDIS_AUTH_URL with_redis.sh test_cache
 *   with_cluster.sh with_redis.sh ... test_cache --cluster
 *
 * KEYROUTE_TEST_REDIS_URL is a throwaway standalone server; KEYROUTE_TEST_REDIS_AUTH_URL a
 * server requiring the password in KEYROUTE_TEST_REDIS_PASSWORD (never in a message); with
 * --cluster, KEYROUTE_TEST_CLUSTER_SEEDS ("host:port,host:port,...") is a local 3-master
 * cluster and every Redis test runs there too.
 *
 * First of all (before any keyroute call), the stampede: this process forks two children
 * having opened nothing; each of the three processes then opens its cache and runs
 * several threads asking for one cold key whose loader takes 200 ms: exactly one loader
 * call in all. Then: options and open errors, values and their ownership, bad input
 * (every code, NULLs, wrong and freed handles, the loader never called), a loader's
 * failure reaching every waiter (threads and another process) with its message, the
 * negative TTL, values over the maximum, invalidation, warm-up (only cold kinds loaded;
 * a login right after adds no loader call), the counters, several threads on one handle,
 * sessions (sliding TTL, expiry, maximum age, version mismatch with the stored version,
 * list, destroy) and devices.
 *
 * Builds as C99 (-std=c99 -Wall -Wextra -Werror -pedantic) and as C++; runs under valgrind
 * and ASan/UBSan (KEYROUTE_TEST_UNDER_CHECKER leaves out the freed-handle checks).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testing.h"

/* ---- time, processes ----------------------------------------------------------------- */

static void sleep_ms(long ms)
{
    struct timespec t;
    t.tv_sec = ms / 1000;
    t.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&t, &t) != 0) {
    }
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Where the Redis handles go: a standalone URL, or cluster seeds. */
typedef struct {
    const char *name;
    const char *url;
    const char *const *seeds;
    size_t nseeds;
} target;

static keyroute_status open_cache(const target *t, const keyroute_cache_options *o,
                                  keyroute_cache **out)
{
    return t->url ? keyroute_cache_open(t->url, o, out)
                  : keyroute_cache_open_cluster(t->seeds, t->nseeds, o, out);
}

static keyroute_status open_sessions(const target *t, const keyroute_session_options *o,
                                     keyroute_sessions **out)
{
    return t->url ? keyroute_sessions_open(t->url, o, out)
                  : keyroute_sessions_open_cluster(t->seeds, t->nseeds, o, out);
}

static keyroute_status open_devices(const target *t, keyroute_devices **out)
{
    return t->url ? keyroute_devices_open(t->url, 0, out)
                  : keyroute_devices_open_cluster(t->seeds, t->nseeds, 0, out);
}

/* A client id unique to this run (the cluster is shared by several runs). */
static char run_id[64];
static const char *client_id(char *buf, size_t cap, const char *what)
{
    snprintf(buf, cap, "c-%s-%s", run_id, what);
    return buf;
}

/* ---- a loader -------------------------------------------------------------------------- */

/* What the test loader does; `calls` counts its calls (under `mu`: warm-ups call it from
 * several threads). Its value is "<kind> of <client>", written in two pieces. */
typedef struct {
    pthread_mutex_t mu;
    long calls;
    long sleep_ms;
    const char *fail_kind;    /* fail for this kind ("*": every kind) ... */
    const char *fail_code;    /* ... with this code (NULL: BACKEND_ERROR) */
    const char *fail_message; /* ... and message (NULL: return rc without a message) */
    int32_t rc;               /* returned when failing */
    size_t big;               /* > 0: write `big` bytes twice instead */
    keyroute_status write_status;
    keyroute_load *kept; /* the sink of the last call (to check it is dead after) */
} loader_ctx;

static void ctx_init(loader_ctx *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    c->rc = 1;
}

static long ctx_calls(loader_ctx *c)
{
    long n;
    pthread_mutex_lock(&c->mu);
    n = c->calls;
    pthread_mutex_unlock(&c->mu);
    return n;
}

static int32_t test_loader(void *p, const char *client, const char *kind, keyroute_load *load)
{
    loader_ctx *c = (loader_ctx *)p;
    pthread_mutex_lock(&c->mu);
    c->calls++;
    c->kept = load;
    pthread_mutex_unlock(&c->mu);
    if (c->sleep_ms)
        sleep_ms(c->sleep_ms);
    if (c->fail_kind && (strcmp(c->fail_kind, "*") == 0 || strcmp(c->fail_kind, kind) == 0)) {
        if (c->fail_message)
            keyroute_load_fail(load, c->fail_code, c->fail_message);
        return c->rc;
    }
    if (c->big) {
        uint8_t *buf = (uint8_t *)xmalloc(c->big);
        memset(buf, 'x', c->big);
        keyroute_load_write(load, buf, c->big);
        c->write_status = keyroute_load_write(load, buf, c->big);
        free(buf);
        return 0; /* the refused write fails the load all the same */
    }
    if (keyroute_load_write(load, B(kind), strlen(kind)) != KEYROUTE_OK ||
        keyroute_load_write(load, B(" of "), 4) != KEYROUTE_OK ||
        keyroute_load_write(load, B(client), strlen(client)) != KEYROUTE_OK ||
        keyroute_load_write(load, NULL, 0) != KEYROUTE_OK)
        return 99;
    return 0;
}

/* Writes nothing: an empty value. */
static int32_t empty_loader(void *p, const char *client, const char *kind, keyroute_load *load)
{
    (void)p;
    (void)client;
    (void)kind;
    return (int32_t)keyroute_load_write(load, NULL, 0);
}

/* get_or_load; on OK the value must be "<kind> of <client>" (NUL-terminated), and is
 * freed. */
static keyroute_status get_value(keyroute_cache *c, const char *client, const char *kind,
                                 int64_t timeout_ms, loader_ctx *ctx)
{
    uint8_t *v = NULL;
    size_t n = 0;
    keyroute_status st =
        keyroute_cache_get_or_load(c, client, kind, timeout_ms, test_loader, ctx, &v, &n);
    if (st == KEYROUTE_OK) {
        char want[1200];
        int wl = snprintf(want, sizeof want, "%s of %s", kind, client);
        CHECKD(v != NULL && n == (size_t)wl && memcmp(v, want, n) == 0 && v[n] == 0, want);
        CHECK(keyroute_value_free(v) == KEYROUTE_OK);
    } else {
        CHECK(v == NULL && n == 0);
    }
    return st;
}

/* ---- the stampede ------------------------------------------------------------------- */

enum { STAMPEDE_PROCS = 3, STAMPEDE_THREADS = 6 };

typedef struct {
    keyroute_cache *cache;
    pthread_barrier_t *go;
    loader_ctx *ctx;
    const char *client;
    keyroute_status st;
} stampede_arg;

static void *stampede_thread(void *p)
{
    stampede_arg *a = (stampede_arg *)p;
    pthread_barrier_wait(a->go);
    a->st = get_value(a->cache, a->client, "accounts", 30000, a->ctx);
    return NULL;
}

/* One process's part: open the cache, start the threads, say ready on `ready_fd`, wait for
 * a byte on `go_fd`, release the threads; returns "calls ok leases waits" in out. */
static void stampede_process(const target *t, const char *client, int ready_fd, int go_fd,
                             long out[4])
{
    keyroute_cache *c = NULL;
    loader_ctx ctx;
    pthread_barrier_t go;
    pthread_t th[STAMPEDE_THREADS];
    stampede_arg args[STAMPEDE_THREADS];
    keyroute_cache_counters s;
    char b = 'r';
    int i;

    ctx_init(&ctx);
    ctx.sleep_ms = 200;
    memset(out, 0, 4 * sizeof out[0]);
    ST(open_cache(t, NULL, &c), KEYROUTE_OK);
    if (!c) {
        out[1] = -1;
        if (write(ready_fd, &b, 1) != 1)
            perror("write");
        return;
    }
    pthread_barrier_init(&go, NULL, STAMPEDE_THREADS + 1);
    for (i = 0; i < STAMPEDE_THREADS; i++) {
        args[i].cache = c;
        args[i].go = &go;
        args[i].ctx = &ctx;
        args[i].client = client;
        args[i].st = KEYROUTE_INTERNAL;
        pthread_create(&th[i], NULL, stampede_thread, &args[i]);
    }
    if (write(ready_fd, &b, 1) != 1 || read(go_fd, &b, 1) != 1)
        perror("stampede pipe");
    pthread_barrier_wait(&go);
    for (i = 0; i < STAMPEDE_THREADS; i++) {
        pthread_join(th[i], NULL);
        if (args[i].st == KEYROUTE_OK)
            out[1]++;
        else
            check_status(args[i].st, KEYROUTE_OK, "stampede get_or_load", __LINE__);
    }
    pthread_barrier_destroy(&go);
    ST(keyroute_cache_stats(c, &s), KEYROUTE_OK);
    out[0] = ctx.calls;
    out[2] = (long)s.leases;
    out[3] = (long)s.waits;
    ST(keyroute_cache_free(c), KEYROUTE_OK);
    pthread_mutex_destroy(&ctx.mu);
}

/* STAMPEDE_PROCS forked processes (forked by this one, which opens nothing, before any of
 * them opens anything) x STAMPEDE_THREADS threads on one cold key, a 200 ms loader: one
 * loader call in all, every caller served. */
static void test_stampede(const target *t)
{
    int ready[2], go[STAMPEDE_PROCS][2], result[STAMPEDE_PROCS][2], i;
    pid_t pid[STAMPEDE_PROCS];
    long total[4] = {0, 0, 0, 0};
    char client[128], b;

    client_id(client, sizeof client, t->url ? "stampede" : "stampede-cluster");
    if (pipe(ready) != 0) {
        perror("pipe");
        exit(2);
    }
    fflush(stdout);
    fflush(stderr);
    for (i = 0; i < STAMPEDE_PROCS; i++) {
        if (pipe(go[i]) != 0 || pipe(result[i]) != 0) {
            perror("pipe");
            exit(2);
        }
        pid[i] = fork();
        if (pid[i] < 0) {
            perror("fork");
            exit(2);
        }
        if (pid[i] == 0) {
            long out[4];
            char line[128];
            int n;
            close(go[i][1]);
            close(result[i][0]);
            stampede_process(t, client, ready[1], go[i][0], out);
            n = snprintf(line, sizeof line, "%ld %ld %ld %ld %ld\n", out[0], out[1], out[2],
                         out[3], failures);
            if (write(result[i][1], line, (size_t)n) != n)
                perror("write");
            fflush(stderr);
            _exit(failures ? 1 : 0);
        }
        close(go[i][0]);
        close(result[i][1]);
    }
    /* Every process has its cache open and its threads waiting: go. */
    for (i = 0; i < STAMPEDE_PROCS; i++)
        if (read(ready[0], &b, 1) != 1)
            perror("read ready");
    for (i = 0; i < STAMPEDE_PROCS; i++)
        if (write(go[i][1], "g", 1) != 1)
            perror("write go");
    for (i = 0; i < STAMPEDE_PROCS; i++) {
        char line[128];
        ssize_t n = read(result[i][0], line, sizeof line - 1);
        long r[5] = {0, 0, 0, 0, 1};
        int status = 0;
        if (n > 0) {
            line[n] = '\0';
            sscanf(line, "%ld %ld %ld %ld %ld", &r[0], &r[1], &r[2], &r[3], &r[4]);
        }
        waitpid(pid[i], &status, 0);
        CHECKD(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a stampede child failed");
        CHECK(r[4] == 0);
        total[0] += r[0];
        total[1] += r[1];
        total[2] += r[2];
        total[3] += r[3];
        close(go[i][1]);
        close(result[i][0]);
    }
    close(ready[0]);
    close(ready[1]);
    CHECKD(total[0] == 1, "exactly one loader call across the processes");
    CHECK(total[1] == STAMPEDE_PROCS * STAMPEDE_THREADS);
    CHECK(total[2] == 1);
    /* Every process but the loader's waited once (its threads share one call), or found
     * the value already there when it came late (slow machine, valgrind). */
    CHECK(total[3] <= STAMPEDE_PROCS - 1);
    printf("stampede (%s): %d processes x %d threads, one cold key, 200 ms loader: %ld "
           "loader call(s), %ld served, %ld lease(s), %ld wait(s)\n",
           t->name, STAMPEDE_PROCS, STAMPEDE_THREADS, total[0], total[1], total[2], total[3]);
}

/* ---- options and opening ------------------------------------------------------------------ */

static void test_options_and_open(const char *url, const char *auth_url, const char *password)
{
    keyroute_cache_options o, bad;
    keyroute_session_options so;
    keyroute_cache *c = (keyroute_cache *)&c, *sentinel = c;
    keyroute_sessions *s = NULL;
    keyroute_devices *d = NULL;
    const char *seeds[1];
    char wrong[300];

    ST(keyroute_cache_options_default(&o), KEYROUTE_OK);
    CHECK(o.lease_ms == 2000 && o.soft_ttl_ms == 60000 && o.hard_ttl_ms == 600000 &&
          o.neg_ttl_ms == 1000);
    CHECK(o.max_value_len == 1048576 && o.serve_stale == 1 && o.xfetch_beta == 1.0 &&
          o.timeout_ms == 0);
    ST(keyroute_cache_options_default(NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_session_options_default(&so), KEYROUTE_OK);
    CHECK(so.ttl_ms == 1800000 && so.max_age_ms == 0 && so.max_data_len == 1048576);
    ST(keyroute_session_options_default(NULL), KEYROUTE_NULL_ARGUMENT);

    /* Refused options are refused before connecting (port 1: nothing listens). */
    bad = o;
    bad.lease_ms = 0;
    STM(keyroute_cache_open("redis://127.0.0.1:1/", &bad, &c), KEYROUTE_BAD_TTL, "lease_ms");
    bad = o;
    bad.hard_ttl_ms = -5;
    STM(keyroute_cache_open("redis://127.0.0.1:1/", &bad, &c), KEYROUTE_BAD_TTL, "-5");
    bad = o;
    bad.soft_ttl_ms = (int64_t)1 << 49;
    ST(keyroute_cache_open("redis://127.0.0.1:1/", &bad, &c), KEYROUTE_BAD_TTL);
    bad = o;
    bad.neg_ttl_ms = -1;
    ST(keyroute_cache_open("redis://127.0.0.1:1/", &bad, &c), KEYROUTE_BAD_TTL);
    bad = o;
    bad.xfetch_beta = -1.0;
    STM(keyroute_cache_open("redis://127.0.0.1:1/", &bad, &c), KEYROUTE_BAD_TTL, "xfetch_beta");
    bad = o;
    bad.max_value_len = 0;
    ST(keyroute_cache_open("redis://127.0.0.1:1/", &bad, &c), KEYROUTE_TOO_LARGE);
    bad = o;
    bad.max_value_len = UINT64_MAX;
    ST(keyroute_cache_open("redis://127.0.0.1:1/", &bad, &c), KEYROUTE_TOO_LARGE);
    so.ttl_ms = 0;
    STM(keyroute_sessions_open("redis://127.0.0.1:1/", &so, &s), KEYROUTE_BAD_TTL, "ttl_ms");
    so.ttl_ms = 1000;
    so.max_age_ms = -1;
    STM(keyroute_sessions_open("redis://127.0.0.1:1/", &so, &s), KEYROUTE_BAD_TTL, "max_age_ms");
    so.max_age_ms = 0;
    so.max_data_len = 0;
    ST(keyroute_sessions_open("redis://127.0.0.1:1/", &so, &s), KEYROUTE_TOO_LARGE);
    CHECK(c == sentinel && s == NULL);

    /* NULLs, bad URLs, a refused port, seeds. */
    ST(keyroute_cache_open(NULL, NULL, &c), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_cache_open(url, NULL, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_cache_open("\xff\xfe", NULL, &c), KEYROUTE_BAD_UTF8);
    ST(keyroute_cache_open("redis://", NULL, &c), KEYROUTE_REDIS_BAD_URL);
    ST(keyroute_cache_open("redis://127.0.0.1:1/", NULL, &c), KEYROUTE_REDIS_CONNECT);
    ST(keyroute_sessions_open("redis://127.0.0.1:1/", NULL, &s), KEYROUTE_REDIS_CONNECT);
    ST(keyroute_devices_open("redis://127.0.0.1:1/", 0, &d), KEYROUTE_REDIS_CONNECT);
    ST(keyroute_devices_open(url, 0, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_cache_open_cluster(NULL, 0, NULL, &c), KEYROUTE_CLUSTER_UNREACHABLE);
    ST(keyroute_cache_open_cluster(NULL, 1, NULL, &c), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_cache_open_cluster(seeds, SIZE_MAX, NULL, &c), KEYROUTE_TOO_LARGE);
    seeds[0] = NULL;
    STM(keyroute_cache_open_cluster(seeds, 1, NULL, &c), KEYROUTE_NULL_ARGUMENT, "seeds[0]");
    seeds[0] = "127.0.0.1:1";
    ST(keyroute_cache_open_cluster(seeds, 1, NULL, &c), KEYROUTE_CLUSTER_UNREACHABLE);
    ST(keyroute_sessions_open_cluster(seeds, 1, NULL, &s), KEYROUTE_CLUSTER_UNREACHABLE);
    ST(keyroute_devices_open_cluster(seeds, 1, 0, &d), KEYROUTE_CLUSTER_UNREACHABLE);
    CHECK(c == sentinel && s == NULL && d == NULL);

    /* A wrong password: REDIS_AUTH, never showing it; the right one opens. */
    snprintf(wrong, sizeof wrong, "redis://:wrong-%s@%s", password, auth_url + 8);
    ST(keyroute_cache_open(wrong, NULL, &c), KEYROUTE_REDIS_AUTH);
    CHECKD(strstr(keyroute_last_error_message(), password) == NULL, "password in a message");
    ST(keyroute_cache_open(auth_url, NULL, &c), KEYROUTE_REDIS_AUTH);
    CHECK(c == sentinel);
    {
        char right[300];
        snprintf(right, sizeof right, "redis://:%s@%s", password, auth_url + 8);
        c = NULL;
        ST(keyroute_cache_open(right, NULL, &c), KEYROUTE_OK);
        {
            loader_ctx ctx;
            char client[128];
            ctx_init(&ctx);
            client_id(client, sizeof client, "auth");
            ST(get_value(c, client, "accounts", 5000, &ctx), KEYROUTE_OK);
            ST(get_value(c, client, "accounts", 5000, &ctx), KEYROUTE_OK);
            CHECK(ctx.calls == 1);
            pthread_mutex_destroy(&ctx.mu);
        }
        ST(keyroute_cache_free(c), KEYROUTE_OK);
    }
    ST(keyroute_cache_free(NULL), KEYROUTE_OK);
    ST(keyroute_sessions_free(NULL), KEYROUTE_OK);
    ST(keyroute_devices_free(NULL), KEYROUTE_OK);
    ST(keyroute_value_free(NULL), KEYROUTE_OK);
    ST(keyroute_session_info_clear(NULL), KEYROUTE_OK);
}

/* ---- values, bad input, handles ---------------------------------------------------------- */

static void test_get_or_load(const target *t)
{
    keyroute_cache *c = NULL;
    keyroute_sessions *s = NULL;
    loader_ctx ctx;
    uint8_t *v = (uint8_t *)&v, *vsentinel = v;
    size_t n = 7;
    char client[128], long_id[600], long_kind[200];
    keyroute_status st;

    ctx_init(&ctx);
    client_id(client, sizeof client, t->url ? "values" : "values-cluster");
    ST(open_cache(t, NULL, &c), KEYROUTE_OK);
    ST(open_sessions(t, NULL, &s), KEYROUTE_OK);
    if (!c || !s)
        return;

    /* A miss loads (the loader sees client and kind), a hit does not. */
    ST(get_value(c, client, "accounts", 5000, &ctx), KEYROUTE_OK);
    ST(get_value(c, client, "accounts", 5000, &ctx), KEYROUTE_OK);
    ST(get_value(c, client, "cards", 5000, &ctx), KEYROUTE_OK);
    CHECK(ctx.calls == 2);

    /* The sink is dead once the loader returned. */
    if (may_touch_freed())
        STM(keyroute_load_write(ctx.kept, B("x"), 1), KEYROUTE_INVALID_HANDLE, "keyroute_load");

    /* An empty value is a value: a buffer holding just the NUL, freed the same way. */
    v = NULL;
    n = 7;
    ST(keyroute_cache_get_or_load(c, client, "empty", 5000, empty_loader, NULL, &v, &n),
       KEYROUTE_OK);
    CHECK(v != NULL && n == 0 && v && v[0] == 0);
    ST(keyroute_value_free(v), KEYROUTE_OK);
    v = NULL;
    ST(keyroute_cache_get_or_load(c, client, "empty", 5000, empty_loader, NULL, &v, &n),
       KEYROUTE_OK); /* a hit this time */
    CHECK(v != NULL && n == 0);
    ST(keyroute_value_free(v), KEYROUTE_OK);

    /* Bad input: every code, nothing loaded, nothing written. */
    ctx.calls = 0;
    v = vsentinel;
    n = 7;
    memset(long_id, 'a', sizeof long_id);
    long_id[513] = '\0';
    memset(long_kind, 'k', sizeof long_kind);
    long_kind[129] = '\0';
#define GOL(cache, cl, kd, to, ld, vo, lo) keyroute_cache_get_or_load(cache, cl, kd, to, ld, &ctx, vo, lo)
    STM(GOL(c, "", "accounts", 5000, test_loader, &v, &n), KEYROUTE_BAD_CLIENT_ID, "client");
    ST(GOL(c, long_id, "accounts", 5000, test_loader, &v, &n), KEYROUTE_BAD_CLIENT_ID);
    long_id[512] = '\0';
    ST(get_value(c, long_id, "accounts", 5000, &ctx), KEYROUTE_OK); /* 512 bytes is fine */
    CHECK(ctx.calls == 1);
    ctx.calls = 0;
    STM(GOL(c, client, "", 5000, test_loader, &v, &n), KEYROUTE_BAD_KIND, "kind");
    ST(GOL(c, client, "acc{ounts", 5000, test_loader, &v, &n), KEYROUTE_BAD_KIND);
    ST(GOL(c, client, "acc}ounts", 5000, test_loader, &v, &n), KEYROUTE_BAD_KIND);
    ST(GOL(c, client, "acc\nounts", 5000, test_loader, &v, &n), KEYROUTE_BAD_KIND);
    ST(GOL(c, client, long_kind, 5000, test_loader, &v, &n), KEYROUTE_BAD_KIND);
    STM(GOL(c, client, "accounts", 0, test_loader, &v, &n), KEYROUTE_BAD_TTL, "timeout_ms");
    ST(GOL(c, client, "accounts", -1, test_loader, &v, &n), KEYROUTE_BAD_TTL);
    ST(GOL(c, client, "accounts", INT64_MAX, test_loader, &v, &n), KEYROUTE_BAD_TTL);
    STM(GOL(c, client, "accounts", 5000, NULL, &v, &n), KEYROUTE_NULL_ARGUMENT, "loader");
    STM(GOL(c, NULL, "accounts", 5000, test_loader, &v, &n), KEYROUTE_NULL_ARGUMENT, "client");
    STM(GOL(c, client, NULL, 5000, test_loader, &v, &n), KEYROUTE_NULL_ARGUMENT, "kind");
    STM(GOL(c, client, "accounts", 5000, test_loader, NULL, &n), KEYROUTE_NULL_ARGUMENT,
        "value_out");
    STM(GOL(c, client, "accounts", 5000, test_loader, &v, NULL), KEYROUTE_NULL_ARGUMENT,
        "len_out");
    STM(GOL(NULL, client, "accounts", 5000, test_loader, &v, &n), KEYROUTE_NULL_ARGUMENT,
        "cache");
    STM(GOL((keyroute_cache *)s, client, "accounts", 5000, test_loader, &v, &n),
        KEYROUTE_INVALID_HANDLE, "it is a keyroute_sessions");
#undef GOL
    CHECK(ctx.calls == 0 && v == vsentinel && n == 7);
    STM(keyroute_cache_invalidate(c, client, "a}b", NULL), KEYROUTE_BAD_KIND, "kind");
    ST(keyroute_cache_invalidate(c, "", "accounts", NULL), KEYROUTE_BAD_CLIENT_ID);
    ST(keyroute_cache_invalidate(NULL, client, "accounts", NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_cache_stats(c, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_cache_stats((keyroute_cache *)s, NULL), KEYROUTE_INVALID_HANDLE);
    ST(keyroute_load_write(NULL, B("x"), 1), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_load_fail(NULL, NULL, "m"), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_load_write((keyroute_load *)c, B("x"), 1), KEYROUTE_INVALID_HANDLE);
    ST(keyroute_cache_free((keyroute_cache *)s), KEYROUTE_INVALID_HANDLE);
    ST(keyroute_sessions_free((keyroute_sessions *)c), KEYROUTE_INVALID_HANDLE);

    /* Values: a pointer into one, or a value freed twice, is refused. */
    st = keyroute_cache_get_or_load(c, client, "accounts", 5000, test_loader, &ctx, &v, &n);
    ST(st, KEYROUTE_OK);
    if (st == KEYROUTE_OK) {
        CHECK(n > 8 && v[n] == 0);
        ST(keyroute_value_free(v + 1), KEYROUTE_INVALID_HANDLE);
        ST(keyroute_value_free(v + 8), KEYROUTE_INVALID_HANDLE);
        ST(keyroute_value_free(v), KEYROUTE_OK);
        if (may_touch_freed())
            STM(keyroute_value_free(v), KEYROUTE_INVALID_HANDLE, "freed");
    }

    /* Invalidate: the next call loads afresh. */
    {
        int32_t existed = -1;
        long before = ctx.calls;
        ST(keyroute_cache_invalidate(c, client, "accounts", &existed), KEYROUTE_OK);
        CHECK(existed == 1);
        ST(keyroute_cache_invalidate(c, client, "never-loaded", &existed), KEYROUTE_OK);
        CHECK(existed == 0);
        ST(get_value(c, client, "accounts", 5000, &ctx), KEYROUTE_OK);
        CHECK(ctx.calls == before + 1);
    }

    /* Freed handles. */
    ST(keyroute_sessions_free(s), KEYROUTE_OK);
    ST(keyroute_cache_free(c), KEYROUTE_OK);
    if (may_touch_freed()) {
        STM(keyroute_cache_free(c), KEYROUTE_INVALID_HANDLE, "freed");
        ST(get_value(c, client, "accounts", 5000, &ctx), KEYROUTE_INVALID_HANDLE);
        ST(keyroute_sessions_free(s), KEYROUTE_INVALID_HANDLE);
    }
    pthread_mutex_destroy(&ctx.mu);
}

/* ---- a direct write ------------------------------------------------------------------ */

typedef struct {
    keyroute_cache *cache;
    const char *client;
    loader_ctx *ctx;
    keyroute_status st;
    uint8_t *value;
    size_t len;
} put_read_arg;

static void *put_read_thread(void *p)
{
    put_read_arg *a = (put_read_arg *)p;
    a->st = keyroute_cache_get_or_load(a->cache, a->client, "prefs", 30000, test_loader, a->ctx,
                                       &a->value, &a->len);
    return NULL;
}

/* keyroute_cache_put while another handle (another process, say) loads the key: the load's
 * value is refused (fenced), and the reader gets the written one, as does everyone after. */
static void test_put(const target *t)
{
    keyroute_cache *c = NULL, *w = NULL;
    keyroute_cache_counters stats;
    loader_ctx ctx;
    pthread_t th;
    put_read_arg a;
    char client[128];
    uint8_t *v = NULL;
    size_t n = 0;
    static uint8_t big[(1 << 20) + 1];

    ctx_init(&ctx);
    ctx.sleep_ms = 400;
    client_id(client, sizeof client, t->url ? "put" : "put-cluster");
    ST(open_cache(t, NULL, &c), KEYROUTE_OK);
    ST(open_cache(t, NULL, &w), KEYROUTE_OK);
    if (!c || !w)
        return;
    memset(&a, 0, sizeof a);
    a.cache = c;
    a.client = client;
    a.ctx = &ctx;
    CHECK(pthread_create(&th, NULL, put_read_thread, &a) == 0);
    while (ctx_calls(&ctx) == 0)
        sleep_ms(5);
    ST(keyroute_cache_put(w, client, "prefs", B("put"), 3, 60000), KEYROUTE_OK);
    pthread_join(th, NULL);
    ST(a.st, KEYROUTE_OK);
    CHECK(a.value != NULL && a.len == 3 && memcmp(a.value, "put", 3) == 0);
    if (a.value)
        ST(keyroute_value_free(a.value), KEYROUTE_OK);
    CHECK(ctx_calls(&ctx) == 1);
    ST(keyroute_cache_stats(c, &stats), KEYROUTE_OK);
    CHECK(stats.fenced_fills == 1);
    ctx.sleep_ms = 0;
    ST(keyroute_cache_get_or_load(w, client, "prefs", 5000, test_loader, &ctx, &v, &n), KEYROUTE_OK);
    CHECK(v != NULL && n == 3 && memcmp(v, "put", 3) == 0 && ctx_calls(&ctx) == 1);
    if (v)
        ST(keyroute_value_free(v), KEYROUTE_OK);
    /* The default TTLs (0), and an empty value. */
    ST(keyroute_cache_put(w, client, "empty", NULL, 0, 0), KEYROUTE_OK);
    v = NULL;
    ST(keyroute_cache_get_or_load(c, client, "empty", 5000, test_loader, &ctx, &v, &n), KEYROUTE_OK);
    CHECK(v != NULL && n == 0 && ctx_calls(&ctx) == 1);
    if (v)
        ST(keyroute_value_free(v), KEYROUTE_OK);

    /* Bad input: nothing sent. */
    STM(keyroute_cache_put(w, client, "prefs", B("v"), 1, -1), KEYROUTE_BAD_TTL, "ttl_ms");
    STM(keyroute_cache_put(w, client, "a{b", B("v"), 1, 0), KEYROUTE_BAD_KIND, "kind");
    ST(keyroute_cache_put(w, "", "prefs", B("v"), 1, 0), KEYROUTE_BAD_CLIENT_ID);
    STM(keyroute_cache_put(w, client, "prefs", NULL, 1, 0), KEYROUTE_NULL_ARGUMENT, "value");
    ST(keyroute_cache_put(NULL, client, "prefs", B("v"), 1, 0), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_cache_put(w, client, "prefs", big, sizeof big, 0), KEYROUTE_VALUE_TOO_LARGE);
    v = NULL;
    ST(keyroute_cache_get_or_load(c, client, "prefs", 5000, test_loader, &ctx, &v, &n), KEYROUTE_OK);
    CHECK(v != NULL && n == 3 && memcmp(v, "put", 3) == 0);
    if (v)
        ST(keyroute_value_free(v), KEYROUTE_OK);

    ST(keyroute_cache_free(w), KEYROUTE_OK);
    ST(keyroute_cache_free(c), KEYROUTE_OK);
    pthread_mutex_destroy(&ctx.mu);
}

/* ---- a loader's failure ------------------------------------------------------------------ */

typedef struct {
    keyroute_cache *cache;
    const char *client;
    loader_ctx *ctx;
    keyroute_status st;
    char message[600];
} call_arg;

static void *call_thread(void *p)
{
    call_arg *a = (call_arg *)p;
    a->st = get_value(a->cache, a->client, "loans", 30000, a->ctx);
    snprintf(a->message, sizeof a->message, "%s", keyroute_last_error_message());
    return NULL;
}

enum { ERR_THREADS = 4 };

/* A loader fails (200 ms in): the caller, the threads waiting in this process and a
 * process waiting for it all get BACKEND_ERROR with the loader's code and message; during
 * the negative TTL nobody calls the backend again; after it, the next caller does. */
static void test_backend_error(const target *t)
{
    keyroute_cache_options o;
    keyroute_cache *c = NULL;
    loader_ctx ctx, never;
    pthread_t th[ERR_THREADS];
    call_arg args[ERR_THREADS];
    int ready[2], go[2], result[2], i, status = 0;
    pid_t pid;
    char client[128], b, line[800];
    ssize_t got;
    double t0;

    client_id(client, sizeof client, t->url ? "failing" : "failing-cluster");
    ST(keyroute_cache_options_default(&o), KEYROUTE_OK);
    o.neg_ttl_ms = 1500;
    if (pipe(ready) != 0 || pipe(go) != 0 || pipe(result) != 0) {
        perror("pipe");
        exit(2);
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork(); /* before this process opens anything in this test */
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        keyroute_cache *cc = NULL;
        keyroute_status st = KEYROUTE_INTERNAL;
        int n;
        ctx_init(&never);
        if (open_cache(t, &o, &cc) == KEYROUTE_OK) {
            if (write(ready[1], "r", 1) != 1 || read(go[0], &b, 1) != 1)
                perror("child pipe");
            st = get_value(cc, client, "loans", 30000, &never);
            keyroute_cache_free(cc);
        } else if (write(ready[1], "r", 1) != 1) {
            perror("child pipe");
        }
        n = snprintf(line, sizeof line, "%d %ld %s\n", (int)st, never.calls,
                     keyroute_last_error_message());
        if (write(result[1], line, (size_t)n) != n)
            perror("write");
        _exit(0);
    }
    close(result[1]);
    ctx_init(&ctx);
    ctx.sleep_ms = 300;
    ctx.fail_kind = "*";
    ctx.fail_code = "E_CORE";
    ctx.fail_message = "core banking did not answer";
    ST(open_cache(t, &o, &c), KEYROUTE_OK);
    if (read(ready[0], &b, 1) != 1)
        perror("read ready");
    for (i = 0; i < ERR_THREADS; i++) {
        args[i].cache = c;
        args[i].client = client;
        args[i].ctx = &ctx;
        args[i].st = KEYROUTE_INTERNAL;
        args[i].message[0] = '\0';
    }
    /* The first caller leases and runs the loader; then the others come. */
    pthread_create(&th[0], NULL, call_thread, &args[0]);
    t0 = now_ms();
    while (ctx_calls(&ctx) == 0 && now_ms() - t0 < 20000)
        sleep_ms(5);
    if (write(go[1], "g", 1) != 1)
        perror("write go");
    for (i = 1; i < ERR_THREADS; i++)
        pthread_create(&th[i], NULL, call_thread, &args[i]);
    for (i = 0; i < ERR_THREADS; i++) {
        pthread_join(th[i], NULL);
        ST(args[i].st, KEYROUTE_BACKEND_ERROR);
        CHECKD(strstr(args[i].message, "E_CORE") != NULL &&
                   strstr(args[i].message, "core banking did not answer") != NULL,
               args[i].message);
    }
    t0 = now_ms(); /* the failure was cached before this */
    /* Within the negative TTL (checked at once: the child may take long to exit under
     * valgrind): the cached failure, no loader call. */
    ctx_init(&never);
    STM(get_value(c, client, "loans", 5000, &never), KEYROUTE_BACKEND_ERROR, "cached");
    CHECK(strstr(keyroute_last_error_message(), "core banking did not answer") != NULL);
    CHECK(never.calls == 0);
    got = read(result[0], line, sizeof line - 1);
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    line[got > 0 ? got : 0] = '\0';
    {
        int st = -1;
        long calls = -1;
        sscanf(line, "%d %ld", &st, &calls);
        CHECKD(st == KEYROUTE_BACKEND_ERROR, line);
        CHECKD(calls == 0, line);
        CHECKD(strstr(line, "core banking did not answer") != NULL, line);
    }
    CHECK(ctx_calls(&ctx) == 1);

    /* After it: loaded again. */
    while (now_ms() - t0 < 1500 + 150)
        sleep_ms(50);
    ST(get_value(c, client, "loans", 5000, &never), KEYROUTE_OK);
    CHECK(never.calls == 1);

    /* A non-zero return without keyroute_load_fail: BACKEND_ERROR naming the number. */
    ctx.sleep_ms = 0;
    ctx.fail_message = NULL;
    ctx.rc = 61;
    STM(get_value(c, client, "deposits", 5000, &ctx), KEYROUTE_BACKEND_ERROR,
        "returned 61 (REDIS_CONNECT)");
    /* keyroute_load_fail without a code: BACKEND_ERROR. */
    ctx.rc = 1;
    ctx.fail_code = NULL;
    ctx.fail_message = "no code given";
    STM(get_value(c, client, "cards", 5000, &ctx), KEYROUTE_BACKEND_ERROR,
        "BACKEND_ERROR: no code given");
    ST(keyroute_cache_free(c), KEYROUTE_OK);
    pthread_mutex_destroy(&ctx.mu);
    pthread_mutex_destroy(&never.mu);
    close(ready[0]);
    close(ready[1]);
    close(go[0]);
    close(go[1]);
    close(result[0]);
}

/* A loader's bad failure arguments; neg_ttl_ms 0 caches nothing; values over the maximum. */
static keyroute_status fail_statuses[3];
static int32_t bad_fail_loader(void *p, const char *client, const char *kind,
                               keyroute_load *load)
{
    (void)p;
    (void)client;
    (void)kind;
    fail_statuses[0] = keyroute_load_fail(load, "E1", NULL);
    fail_statuses[1] = keyroute_load_fail(load, "E1", "bad \xff text");
    fail_statuses[2] = keyroute_load_fail(load, "\xfe", "text");
    return 5;
}

static void test_limits(const target *t)
{
    keyroute_cache_options o;
    keyroute_cache *c = NULL;
    loader_ctx ctx;
    uint8_t *v = NULL;
    size_t n = 0;
    char client[128];

    client_id(client, sizeof client, t->url ? "limits" : "limits-cluster");
    ST(keyroute_cache_options_default(&o), KEYROUTE_OK);
    o.neg_ttl_ms = 0;
    o.max_value_len = 64;
    ST(open_cache(t, &o, &c), KEYROUTE_OK);
    if (!c)
        return;
    ctx_init(&ctx);

    ST(keyroute_cache_get_or_load(c, client, "x", 5000, bad_fail_loader, NULL, &v, &n),
       KEYROUTE_BACKEND_ERROR);
    CHECK(fail_statuses[0] == KEYROUTE_NULL_ARGUMENT);
    CHECK(fail_statuses[1] == KEYROUTE_BAD_UTF8 && fail_statuses[2] == KEYROUTE_BAD_UTF8);
    CHECK(strstr(keyroute_last_error_message(), "returned 5") != NULL);

    /* neg_ttl_ms 0: a failure is not cached, the next caller loads. */
    ctx.fail_kind = "*";
    ctx.fail_message = "down";
    ST(get_value(c, client, "a", 5000, &ctx), KEYROUTE_BACKEND_ERROR);
    ST(get_value(c, client, "a", 5000, &ctx), KEYROUTE_BACKEND_ERROR);
    CHECK(ctx.calls == 2);
    ctx.fail_kind = NULL;
    ST(get_value(c, client, "a", 5000, &ctx), KEYROUTE_OK);

    /* Over max_value_len (64): the refused write, then VALUE_TOO_LARGE for the caller. */
    ctx.big = 40;
    ctx.calls = 0;
    STM(get_value(c, client, "b", 5000, &ctx), KEYROUTE_VALUE_TOO_LARGE, "max_value_len");
    CHECK(ctx.write_status == KEYROUTE_VALUE_TOO_LARGE);
    CHECK(ctx.calls == 1);
    ctx.big = 32; /* 64 bytes exactly */
    v = NULL;
    ST(keyroute_cache_get_or_load(c, client, "b", 5000, test_loader, &ctx, &v, &n), KEYROUTE_OK);
    CHECK(n == 64 && v && v[0] == 'x' && v[64] == 0);
    ST(keyroute_value_free(v), KEYROUTE_OK);
    ST(keyroute_cache_free(c), KEYROUTE_OK);
    pthread_mutex_destroy(&ctx.mu);
}

/* ---- warm-up and devices ------------------------------------------------------------------- */

static void test_warm_and_devices(const target *t)
{
    keyroute_cache *c = NULL;
    keyroute_devices *d = NULL;
    loader_ctx ctx;
    keyroute_warm_outcome out[5];
    const char *kinds[5] = {"accounts", "cards", "deposits", "loans", "cards"};
    const char *many[KEYROUTE_MAX_WARM_KINDS + 1];
    char client[128], device[128], other[128];
    uint8_t *v = NULL;
    size_t n = 0, i;
    keyroute_cache_counters s0, s1;

    client_id(client, sizeof client, t->url ? "warm" : "warm-cluster");
    snprintf(device, sizeof device, "ios-%s-%s", run_id, t->url ? "s" : "c");
    snprintf(other, sizeof other, "android-%s-%s", run_id, t->url ? "s" : "c");
    ST(open_cache(t, NULL, &c), KEYROUTE_OK);
    ST(open_devices(t, &d), KEYROUTE_OK);
    if (!c || !d)
        return;
    ctx_init(&ctx);

    /* Devices. */
    STM(keyroute_devices_client_of(d, device, &v, &n), KEYROUTE_NOT_FOUND, device);
    CHECK(v == NULL);
    ST(keyroute_devices_bind(d, device, client, 60000), KEYROUTE_OK);
    ST(keyroute_devices_client_of(d, device, &v, &n), KEYROUTE_OK);
    CHECK(v && n == strlen(client) && memcmp(v, client, n) == 0 && v[n] == 0);
    ST(keyroute_value_free(v), KEYROUTE_OK);
    v = NULL;
    ST(keyroute_devices_bind(d, other, client, 300), KEYROUTE_OK);
    STM(keyroute_devices_bind(d, "a{b", client, 1000), KEYROUTE_BAD_DEVICE_ID, "device");
    ST(keyroute_devices_bind(d, "", client, 1000), KEYROUTE_BAD_DEVICE_ID);
    ST(keyroute_devices_bind(d, device, "", 1000), KEYROUTE_BAD_CLIENT_ID);
    ST(keyroute_devices_bind(d, device, client, 0), KEYROUTE_BAD_TTL);
    ST(keyroute_devices_bind(d, device, client, -1), KEYROUTE_BAD_TTL);
    ST(keyroute_devices_bind(d, NULL, client, 1000), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_devices_bind((keyroute_devices *)c, device, client, 1000),
       KEYROUTE_INVALID_HANDLE);
    ST(keyroute_devices_client_of(d, "x}", &v, &n), KEYROUTE_BAD_DEVICE_ID);
    ST(keyroute_devices_client_of(d, device, NULL, &n), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_devices_client_of(d, device, &v, NULL), KEYROUTE_NULL_ARGUMENT);

    /* Warm-up: "accounts" is warm already, the other kinds are cold; "cards" twice. */
    ST(get_value(c, client, "accounts", 5000, &ctx), KEYROUTE_OK);
    ST(keyroute_cache_stats(c, &s0), KEYROUTE_OK);
    ctx.calls = 0;
    ctx.fail_kind = "deposits";
    ctx.fail_message = "deposits backend down";
    ctx.sleep_ms = 100;
    for (i = 0; i < 5; i++)
        out[i] = (keyroute_warm_outcome)7;
    ST(keyroute_cache_warm(c, device, kinds, 5, test_loader, &ctx, out), KEYROUTE_OK);
    CHECK(out[0] == KEYROUTE_WARM_SKIPPED);
    CHECK(out[1] == KEYROUTE_WARM_GRANTED);
    CHECK(out[2] == KEYROUTE_WARM_FAILED);
    CHECK(out[3] == KEYROUTE_WARM_GRANTED);
    CHECK(out[4] == KEYROUTE_WARM_SKIPPED);
    CHECK(ctx_calls(&ctx) == 3); /* cards, deposits, loans: only the cold kinds, once */
    ST(keyroute_cache_stats(c, &s1), KEYROUTE_OK);
    CHECK(s1.leases - s0.leases == 3 && s1.backend_calls - s0.backend_calls == 3);
    CHECK(s1.backend_errors - s0.backend_errors == 1);
    /* The login right after: served from the warm-up, no loader call. */
    ctx.fail_kind = NULL;
    ctx.sleep_ms = 0;
    ST(get_value(c, client, "cards", 5000, &ctx), KEYROUTE_OK);
    ST(get_value(c, client, "loans", 5000, &ctx), KEYROUTE_OK);
    ST(get_value(c, client, "deposits", 5000, &ctx), KEYROUTE_BACKEND_ERROR); /* cached */
    CHECK(ctx_calls(&ctx) == 3);
    /* A second warm-up finds everything warm (or the failure cached). */
    ST(keyroute_cache_warm(c, device, kinds, 4, test_loader, &ctx, out), KEYROUTE_OK);
    CHECK(out[0] == KEYROUTE_WARM_SKIPPED && out[1] == KEYROUTE_WARM_SKIPPED &&
          out[2] == KEYROUTE_WARM_SKIPPED && out[3] == KEYROUTE_WARM_SKIPPED);
    CHECK(ctx_calls(&ctx) == 3);

    /* Refused warm-ups load nothing and write no outcome. */
    for (i = 0; i < 5; i++)
        out[i] = (keyroute_warm_outcome)7;
    STM(keyroute_cache_warm(c, "unknown-device", kinds, 2, test_loader, &ctx, out),
        KEYROUTE_NOT_FOUND, "unknown-device");
    for (i = 0; i <= KEYROUTE_MAX_WARM_KINDS; i++)
        many[i] = "accounts";
    ST(keyroute_cache_warm(c, device, many, KEYROUTE_MAX_WARM_KINDS + 1, test_loader, &ctx,
                           out),
       KEYROUTE_TOO_LARGE);
    ST(keyroute_cache_warm(c, device, kinds, SIZE_MAX, test_loader, &ctx, out),
       KEYROUTE_TOO_LARGE);
    kinds[4] = "ca{rds";
    STM(keyroute_cache_warm(c, device, kinds, 5, test_loader, &ctx, out), KEYROUTE_BAD_KIND,
        "kind");
    kinds[4] = NULL;
    STM(keyroute_cache_warm(c, device, kinds, 5, test_loader, &ctx, out),
        KEYROUTE_NULL_ARGUMENT, "kinds[4]");
    ST(keyroute_cache_warm(c, "a}", kinds, 2, test_loader, &ctx, out), KEYROUTE_BAD_DEVICE_ID);
    ST(keyroute_cache_warm(c, device, kinds, 2, NULL, &ctx, out), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_cache_warm(c, device, kinds, 2, test_loader, &ctx, NULL),
       KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_cache_warm(c, device, NULL, 2, test_loader, &ctx, out), KEYROUTE_NULL_ARGUMENT);
    for (i = 0; i < 5; i++)
        CHECK(out[i] == (keyroute_warm_outcome)7);
    CHECK(ctx_calls(&ctx) == 3);
    ST(keyroute_cache_warm(c, device, NULL, 0, test_loader, &ctx, NULL), KEYROUTE_OK);

    /* A binding expires by its TTL. */
    sleep_ms(600);
    ST(keyroute_devices_client_of(d, other, &v, &n), KEYROUTE_NOT_FOUND);

    ST(keyroute_devices_free(d), KEYROUTE_OK);
    ST(keyroute_cache_free(c), KEYROUTE_OK);
    pthread_mutex_destroy(&ctx.mu);
}

/* ---- several threads on one handle --------------------------------------------------------- */

enum { MT_THREADS = 6, MT_KEYS = 12 };

typedef struct {
    keyroute_cache *cache;
    keyroute_sessions *sessions;
    loader_ctx *ctx;
    const char *client;
    const char *sid;
    long bad;
} mt_arg;

static void *mt_thread(void *p)
{
    mt_arg *a = (mt_arg *)p;
    int k, round;
    for (round = 0; round < 3; round++)
        for (k = 0; k < MT_KEYS; k++) {
            char kind[32];
            keyroute_session_info info;
            snprintf(kind, sizeof kind, "kind-%d", k);
            if (get_value(a->cache, a->client, kind, 30000, a->ctx) != KEYROUTE_OK)
                a->bad++;
            memset(&info, 0, sizeof info);
            if (keyroute_sessions_touch(a->sessions, a->sid, "v1", &info) != KEYROUTE_OK ||
                info.data_len != 4 || memcmp(info.data, "data", 4) != 0)
                a->bad++;
            keyroute_session_info_clear(&info);
        }
    return NULL;
}

/* MT_THREADS threads share one cache and one sessions handle, asking for MT_KEYS keys
 * three times each and touching one session: every key loaded exactly once. */
static void test_threads(const target *t)
{
    keyroute_cache *c = NULL;
    keyroute_sessions *s = NULL;
    loader_ctx ctx;
    pthread_t th[MT_THREADS];
    mt_arg args[MT_THREADS];
    char client[128], sid[KEYROUTE_SESSION_ID_SIZE];
    keyroute_cache_counters st;
    int i;

    client_id(client, sizeof client, t->url ? "threads" : "threads-cluster");
    ST(open_cache(t, NULL, &c), KEYROUTE_OK);
    ST(open_sessions(t, NULL, &s), KEYROUTE_OK);
    if (!c || !s)
        return;
    ST(keyroute_sessions_create(s, client, "v1", B("data"), 4, sid, sizeof sid, NULL),
       KEYROUTE_OK);
    ctx_init(&ctx);
    ctx.sleep_ms = 20;
    for (i = 0; i < MT_THREADS; i++) {
        args[i].cache = c;
        args[i].sessions = s;
        args[i].ctx = &ctx;
        args[i].client = client;
        args[i].sid = sid;
        args[i].bad = 0;
        pthread_create(&th[i], NULL, mt_thread, &args[i]);
    }
    for (i = 0; i < MT_THREADS; i++) {
        pthread_join(th[i], NULL);
        CHECK(args[i].bad == 0);
    }
    CHECKD(ctx.calls == MT_KEYS, "each key loaded once by threads sharing a handle");
    ST(keyroute_cache_stats(c, &st), KEYROUTE_OK);
    CHECK(st.backend_calls == MT_KEYS && st.leases == MT_KEYS);
    CHECK(st.hits + st.coalesced + st.leases == (uint64_t)MT_THREADS * MT_KEYS * 3);
    ST(keyroute_sessions_free(s), KEYROUTE_OK);
    ST(keyroute_cache_free(c), KEYROUTE_OK);
    pthread_mutex_destroy(&ctx.mu);
}

/* ---- sessions -------------------------------------------------------------------------------- */

static void test_sessions(const target *t)
{
    keyroute_session_options o;
    keyroute_sessions *s = NULL, *aged = NULL, *tiny = NULL;
    keyroute_session_info info;
    keyroute_session_entry list[4];
    char client[128], sid[KEYROUTE_SESSION_ID_SIZE], sid2[KEYROUTE_SESSION_ID_SIZE],
        small[KEYROUTE_SESSION_ID_LEN], version[200];
    uint64_t expires = 0;
    size_t count = 99;
    int32_t was = -1;
    int i;

    client_id(client, sizeof client, t->url ? "sessions" : "sessions-cluster");
    ST(keyroute_session_options_default(&o), KEYROUTE_OK);
    o.ttl_ms = 1000;
    ST(open_sessions(t, &o, &s), KEYROUTE_OK);
    o.max_age_ms = 1500;
    ST(open_sessions(t, &o, &aged), KEYROUTE_OK);
    o.max_age_ms = 0;
    o.max_data_len = 8;
    ST(open_sessions(t, &o, &tiny), KEYROUTE_OK);
    if (!s || !aged || !tiny)
        return;
    memset(&info, 0, sizeof info);

    /* Create and touch. */
    ST(keyroute_sessions_create(s, client, "v1", B("{\"lang\":\"en\"}"), 13, sid, sizeof sid,
                                &expires),
       KEYROUTE_OK);
    CHECK(strlen(sid) == KEYROUTE_SESSION_ID_LEN && expires > 0);
    ST(keyroute_sessions_touch(s, sid, "v1", &info), KEYROUTE_OK);
    CHECK(info.client_len == strlen(client) && memcmp(info.client, client, info.client_len) == 0);
    CHECK(info.data_len == 13 && memcmp(info.data, "{\"lang\":\"en\"}", 13) == 0 &&
          info.data[13] == 0);
    CHECK(info.version_len == 2 && memcmp(info.version, "v1", 2) == 0);
    CHECK(info.expires_at_ms >= expires);
    ST(keyroute_session_info_clear(&info), KEYROUTE_OK);
    CHECK(info.client == NULL && info.data == NULL && info.version == NULL);
    ST(keyroute_session_info_clear(&info), KEYROUTE_OK); /* cleared twice: nothing to do */

    /* Version mismatch: the stored version handed out, the session not touched. */
    STM(keyroute_sessions_touch(s, sid, "v2", &info), KEYROUTE_VERSION_MISMATCH, "\"v1\"");
    CHECK(info.version && info.version_len == 2 && memcmp(info.version, "v1", 2) == 0 &&
          info.client == NULL && info.data == NULL);
    ST(keyroute_session_info_clear(&info), KEYROUTE_OK);
    /* No version given: no check. */
    ST(keyroute_sessions_touch(s, sid, NULL, &info), KEYROUTE_OK);
    ST(keyroute_session_info_clear(&info), KEYROUTE_OK);
    CHECKD(strstr(keyroute_last_error_message(), sid) == NULL, "a session id in a message");

    /* Sliding: touched every 300 ms for 1.5 s (past the 1 s TTL), it lives; idle, it expires. */
    for (i = 0; i < 5; i++) {
        sleep_ms(300);
        ST(keyroute_sessions_touch(s, sid, "v1", &info), KEYROUTE_OK);
        ST(keyroute_session_info_clear(&info), KEYROUTE_OK);
    }
    sleep_ms(1400);
    STM(keyroute_sessions_touch(s, sid, "v1", &info), KEYROUTE_SESSION_EXPIRED, "log in again");
    CHECK(info.client == NULL && info.version == NULL);

    /* Maximum age (1.5 s): touched every 300 ms, it still ends. */
    ST(keyroute_sessions_create(aged, client, "v1", NULL, 0, sid2, sizeof sid2, NULL),
       KEYROUTE_OK);
    {
        double t0 = now_ms();
        keyroute_status st = KEYROUTE_OK;
        while (st == KEYROUTE_OK && now_ms() - t0 < 4000) {
            sleep_ms(300);
            st = keyroute_sessions_touch(aged, sid2, NULL, &info);
            keyroute_session_info_clear(&info);
        }
        ST(st, KEYROUTE_SESSION_EXPIRED);
        CHECK(now_ms() - t0 >= 1400);
    }

    /* List and destroy. */
    ST(keyroute_sessions_create(s, client, "v1", NULL, 0, sid, sizeof sid, NULL), KEYROUTE_OK);
    ST(keyroute_sessions_create(s, client, "v1", B("x"), 1, sid2, sizeof sid2, NULL),
       KEYROUTE_OK);
    ST(keyroute_sessions_list(s, client, list, 4, &count), KEYROUTE_OK);
    CHECK(count == 2);
    CHECK((strcmp(list[0].sid, sid) == 0 && strcmp(list[1].sid, sid2) == 0) ||
          (strcmp(list[0].sid, sid2) == 0 && strcmp(list[1].sid, sid) == 0));
    CHECK(list[0].expires_at_ms <= list[1].expires_at_ms && list[0].expires_at_ms > 0);
    count = 0;
    list[0].sid[0] = '#';
    STM(keyroute_sessions_list(s, client, list, 1, &count), KEYROUTE_BUFFER_TOO_SMALL, "2");
    CHECK(count == 2 && list[0].sid[0] == '#');
    ST(keyroute_sessions_list(s, client, NULL, 0, &count), KEYROUTE_BUFFER_TOO_SMALL);
    CHECK(count == 2);
    ST(keyroute_sessions_list(s, client, NULL, 1, &count), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_sessions_list(s, client, list, SIZE_MAX, &count), KEYROUTE_TOO_LARGE);
    ST(keyroute_sessions_list(s, client, list, 4, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_sessions_destroy(s, sid, &was), KEYROUTE_OK);
    CHECK(was == 1);
    ST(keyroute_sessions_destroy(s, sid, &was), KEYROUTE_OK);
    CHECK(was == 0);
    ST(keyroute_sessions_touch(s, sid, NULL, &info), KEYROUTE_SESSION_EXPIRED);
    ST(keyroute_sessions_list(s, client, list, 4, &count), KEYROUTE_OK);
    CHECK(count == 1 && strcmp(list[0].sid, sid2) == 0);
    {
        char unknown[128];
        client_id(unknown, sizeof unknown, "nobody");
        ST(keyroute_sessions_list(s, unknown, NULL, 0, &count), KEYROUTE_OK);
        CHECK(count == 0);
    }

    /* Bad input: nothing created. */
    STM(keyroute_sessions_create(s, client, "v1", NULL, 0, small, sizeof small, NULL),
        KEYROUTE_BUFFER_TOO_SMALL, "KEYROUTE_SESSION_ID_SIZE");
    ST(keyroute_sessions_create(s, client, "v1", NULL, 0, NULL, 64, NULL),
       KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_sessions_create(s, "", "v1", NULL, 0, sid, sizeof sid, NULL),
       KEYROUTE_BAD_CLIENT_ID);
    memset(version, 'v', sizeof version);
    version[129] = '\0';
    ST(keyroute_sessions_create(s, client, version, NULL, 0, sid, sizeof sid, NULL),
       KEYROUTE_BAD_VERSION);
    ST(keyroute_sessions_create(s, client, "v\xff", NULL, 0, sid, sizeof sid, NULL),
       KEYROUTE_BAD_UTF8);
    ST(keyroute_sessions_create(s, client, NULL, NULL, 0, sid, sizeof sid, NULL),
       KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_sessions_create(s, client, "v1", NULL, 3, sid, sizeof sid, NULL),
       KEYROUTE_NULL_ARGUMENT);
    STM(keyroute_sessions_create(tiny, client, "v1", B("123456789"), 9, sid, sizeof sid, NULL),
        KEYROUTE_VALUE_TOO_LARGE, "8");
    ST(keyroute_sessions_list(s, client, list, 4, &count), KEYROUTE_OK);
    CHECK(count == 1);
    STM(keyroute_sessions_touch(s, "not-a-session", NULL, &info), KEYROUTE_BAD_SESSION_ID,
        "session");
    ST(keyroute_sessions_touch(s, "", NULL, &info), KEYROUTE_BAD_SESSION_ID);
    ST(keyroute_sessions_touch(s, sid2, version, &info), KEYROUTE_BAD_VERSION);
    ST(keyroute_sessions_touch(s, sid2, "\xff", &info), KEYROUTE_BAD_UTF8);
    ST(keyroute_sessions_touch(s, sid2, NULL, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_sessions_touch(s, NULL, NULL, &info), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_sessions_touch(NULL, sid2, NULL, &info), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_sessions_destroy(s, "x", NULL), KEYROUTE_BAD_SESSION_ID);
    ST(keyroute_sessions_list(s, "", NULL, 0, &count), KEYROUTE_BAD_CLIENT_ID);
    CHECK(info.client == NULL && info.data == NULL && info.version == NULL);
    {
        /* A wrong pointer in a session info: refused, left as it is. */
        uint8_t junk[32];
        memset(junk, 0, sizeof junk);
        info.data = junk + 16;
        ST(keyroute_session_info_clear(&info), KEYROUTE_INVALID_HANDLE);
        CHECK(info.data == junk + 16);
        info.data = NULL;
    }

    ST(keyroute_sessions_free(tiny), KEYROUTE_OK);
    ST(keyroute_sessions_free(aged), KEYROUTE_OK);
    ST(keyroute_sessions_free(s), KEYROUTE_OK);
}

/* ---- main ------------------------------------------------------------------------------------ */

/* Splits "a,b,c" into seeds (pointers into a copy). */
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

static void run_all(const target *t)
{
    test_get_or_load(t);
    test_put(t);
    test_backend_error(t);
    test_limits(t);
    test_warm_and_devices(t);
    test_threads(t);
    test_sessions(t);
}

int main(int argc, char **argv)
{
    const char *url = getenv("KEYROUTE_TEST_REDIS_URL");
    const char *auth_url = getenv("KEYROUTE_TEST_REDIS_AUTH_URL");
    const char *password = getenv("KEYROUTE_TEST_REDIS_PASSWORD");
    const char *cluster_env = getenv("KEYROUTE_TEST_CLUSTER_SEEDS");
    int cluster = argc > 1 && strcmp(argv[1], "--cluster") == 0;
    char *seed_copy = NULL;
    const char *seeds[16];
    target standalone, clustered;

    if (!url || !*url || !auth_url || !*auth_url || !password || !*password ||
        (cluster && (!cluster_env || !*cluster_env))) {
        fputs("test_cache: set KEYROUTE_TEST_REDIS_URL, KEYROUTE_TEST_REDIS_AUTH_URL and "
              "KEYROUTE_TEST_REDIS_PASSWORD (with_redis.sh --password --var "
              "KEYROUTE_TEST_REDIS_AUTH_URL with_redis.sh test_cache), and with --cluster "
              "KEYROUTE_TEST_CLUSTER_SEEDS (with_cluster.sh)\n",
              stderr);
        return 2;
    }
    snprintf(run_id, sizeof run_id, "%ld", (long)getpid());
    standalone.name = "standalone";
    standalone.url = url;
    standalone.seeds = NULL;
    standalone.nseeds = 0;
    clustered = standalone;
    if (cluster) {
        seed_copy = (char *)xmalloc(strlen(cluster_env) + 1);
        strcpy(seed_copy, cluster_env);
        clustered.name = "3-master cluster";
        clustered.url = NULL;
        clustered.seeds = seeds;
        clustered.nseeds = split_seeds(seed_copy, seeds, 16);
    }

    /* First, before this process makes any keyroute call: the forked stampede. */
    test_stampede(&standalone);
    if (cluster)
        test_stampede(&clustered);

    test_options_and_open(url, auth_url, password);
    run_all(&standalone);
    if (cluster)
        run_all(&clustered);
    free(seed_copy);
    printf("keyroute C smart-cache tests (%s, %s%s): %ld checks, %ld failed\n",
           keyroute_version(), url, cluster ? ", and a 3-master cluster" : "", checks, failures);
    return failures ? 1 : 0;
}
