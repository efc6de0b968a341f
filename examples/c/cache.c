/*
 * keyroute's smart cache from C: a product list loaded once from a slow backend whatever
 * the number of front processes asking, a session any front can read, and a warm-up by
 * device before login.
 *
 *   cc -std=c99 cache.c $(pkg-config --cflags --libs keyroute) -o cache
 *   ./cache redis://127.0.0.1:6379/          (or set KEYROUTE_REDIS_URL)
 *
 * Add -Wl,-rpath,"$(pkg-config --variable=libdir keyroute)" when the library is not in a
 * directory the loader searches. `make test-c` runs it on a throwaway redis-server.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <keyroute.h>

/* The backend: about 200 ms per call. `ctx` counts the calls. */
static int32_t load_from_backend(void *ctx, const char *client, const char *kind,
                                 keyroute_load *load)
{
    struct timespec t = {0, 200 * 1000000L};
    char json[256];
    int n;

    ++*(int *)ctx;
    nanosleep(&t, NULL);
    if (strcmp(kind, "loans") == 0) {
        /* A failure: every caller waiting for this key gets KEYROUTE_BACKEND_ERROR with
         * this message, and nobody calls the backend again during the negative TTL. */
        keyroute_load_fail(load, "E_CORE", "the loans system did not answer");
        return 1;
    }
    n = snprintf(json, sizeof json, "[{\"client\":\"%s\",\"kind\":\"%s\"}]", client, kind);
    /* keyroute copies the bytes: `json` stays ours. */
    return keyroute_load_write(load, (const uint8_t *)json, (size_t)n) == KEYROUTE_OK ? 0 : 1;
}

static int fail(const char *what, keyroute_status st)
{
    fprintf(stderr, "%s: %s: %s\n", what, keyroute_status_name(st), keyroute_last_error_message());
    return 1;
}

int main(int argc, char **argv)
{
    const char *url = argc > 1 ? argv[1] : getenv("KEYROUTE_REDIS_URL");
    keyroute_cache *cache = NULL;
    keyroute_sessions *sessions = NULL;
    keyroute_devices *devices = NULL;
    keyroute_cache_options options;
    keyroute_session_info info = {0};
    keyroute_warm_outcome outcomes[3];
    const char *kinds[3] = {"accounts", "cards", "deposits"};
    char sid[KEYROUTE_SESSION_ID_SIZE];
    uint8_t *value = NULL;
    size_t len = 0;
    int calls = 0, i, round;
    keyroute_status st;

    if (!url)
        url = "redis://127.0.0.1:6379/";
    keyroute_cache_options_default(&options); /* lease 2 s, soft 60 s, hard 10 min, neg 1 s */
    options.lease_ms = 5000;
    if ((st = keyroute_cache_open(url, &options, &cache)) != KEYROUTE_OK)
        return fail("keyroute_cache_open", st);
    if ((st = keyroute_sessions_open(url, NULL, &sessions)) != KEYROUTE_OK ||
        (st = keyroute_devices_open(url, 0, &devices)) != KEYROUTE_OK)
        return fail("open", st);

    /* Cold, then warm: one backend call. */
    for (round = 0; round < 2; round++) {
        st = keyroute_cache_get_or_load(cache, "client-42", "accounts", 5000, load_from_backend,
                                        &calls, &value, &len);
        if (st != KEYROUTE_OK)
            return fail("keyroute_cache_get_or_load", st);
        printf("accounts: %.*s (backend calls so far: %d)\n", (int)len, (const char *)value,
               calls);
        keyroute_value_free(value); /* every value handed out is freed with this */
    }
    st = keyroute_cache_get_or_load(cache, "client-42", "loans", 5000, load_from_backend, &calls,
                                    &value, &len);
    printf("loans: %s: %s\n", keyroute_status_name(st), keyroute_last_error_message());

    /* A session any front server can read from its id. */
    if ((st = keyroute_sessions_create(sessions, "client-42", "app-2.14", (const uint8_t *)"{}",
                                       2, sid, sizeof sid, NULL)) != KEYROUTE_OK)
        return fail("keyroute_sessions_create", st);
    st = keyroute_sessions_touch(sessions, sid, "app-2.14", &info);
    printf("session touch: %s, client %.*s\n", keyroute_status_name(st), (int)info.client_len,
           (const char *)info.client);
    keyroute_session_info_clear(&info);
    st = keyroute_sessions_touch(sessions, sid, "app-3.0", &info); /* after an upgrade */
    printf("session touch by app-3.0: %s (stored version %.*s)\n", keyroute_status_name(st),
           (int)info.version_len, (const char *)info.version);
    keyroute_session_info_clear(&info);
    keyroute_sessions_destroy(sessions, sid, NULL);
    st = keyroute_sessions_touch(sessions, sid, NULL, &info);
    printf("session touch after logout: %s\n", keyroute_status_name(st));

    /* At app start, before login: warm the client's cold kinds by device. */
    keyroute_devices_bind(devices, "ios-7F3A", "client-42", 90LL * 24 * 3600 * 1000);
    st = keyroute_cache_warm(cache, "ios-7F3A", kinds, 3, load_from_backend, &calls, outcomes);
    if (st != KEYROUTE_OK)
        return fail("keyroute_cache_warm", st);
    for (i = 0; i < 3; i++)
        printf("warm %s: %s\n", kinds[i],
               outcomes[i] == KEYROUTE_WARM_GRANTED   ? "loaded"
               : outcomes[i] == KEYROUTE_WARM_SKIPPED ? "already warm"
                                                      : "failed");
    printf("backend calls: %d\n", calls);

    keyroute_devices_free(devices);
    keyroute_sessions_free(sessions);
    keyroute_cache_free(cache);
    return 0;
}
