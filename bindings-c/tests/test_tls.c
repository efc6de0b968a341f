/* The C library on a TLS-only, password-protected redis-server (tests/with_tls_redis.sh):
 * a least-used pool seeded and picked over rediss:// with ssl_ca_certs; a CA that did not
 * sign the server's certificate is KEYROUTE_REDIS_TLS; a wrong password is
 * KEYROUTE_REDIS_AUTH; no message shows the password.
 *
 * With --acl-cluster (under tests/with_cluster.sh --acl too): the *_open_cluster() calls
 * on a 3-master cluster whose nodes require keyroute's ACL user (not `default`): a pool
 * seeded and picked, a smart cache filled and served; the same seeds with a wrong
 * password are KEYROUTE_REDIS_AUTH, the password in no message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyroute.h"

static int failures = 0;

#define CHECK(cond, what)                                                                  \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "test_tls: %s:%d: %s (%s)\n", __FILE__, __LINE__, what,        \
                    keyroute_last_error_message());                                        \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

static const char *env(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL) {
        fprintf(stderr,
                "test_tls: %s is not set: run under tests/with_tls_redis.sh (and "
                "tests/with_cluster.sh --acl for --acl-cluster)\n",
                name);
        exit(2);
    }
    return v;
}

static int32_t cards_loader(void *ctx, const char *client, const char *kind,
                            struct keyroute_load *load)
{
    (void)ctx;
    (void)client;
    (void)kind;
    return keyroute_load_write(load, (const uint8_t *)"cards", 5) == KEYROUTE_OK ? 0 : 1;
}

#define MAX_SEEDS 8

/* Splits the comma-separated `list` (copied into `buf`) into at most MAX_SEEDS seeds. */
static size_t split_seeds(const char *list, char *buf, size_t cap, const char **seeds)
{
    size_t n = 0;
    snprintf(buf, cap, "%s", list);
    for (char *p = strtok(buf, ","); p != NULL && n < MAX_SEEDS; p = strtok(NULL, ","))
        seeds[n++] = p;
    return n;
}

/* The *_open_cluster() calls as keyroute's ACL user, and with a wrong password. */
static void acl_cluster(void)
{
    const char *list = env("KEYROUTE_TEST_CLUSTER_SEEDS");
    const char *password = env("KEYROUTE_TEST_CLUSTER_PASSWORD");
    char buf[4096];
    const char *seeds[MAX_SEEDS];
    size_t n = split_seeds(list, buf, sizeof buf, seeds);
    CHECK(n == 3 && strstr(seeds[0], "redis://keyroute:") == seeds[0], "three user seeds");
    const uint8_t key[] = "{c-acl}:pool";

    struct keyroute_least_used *lu = NULL;
    CHECK(keyroute_least_used_open_cluster(seeds, n, key, sizeof key - 1, 3000, &lu) ==
              KEYROUTE_OK,
          "open_cluster as the ACL user");
    if (lu != NULL) {
        const uint8_t *members[] = {(const uint8_t *)"p1", (const uint8_t *)"p2"};
        size_t lens[] = {2, 2};
        size_t added = 0;
        CHECK(keyroute_least_used_seed(lu, members, lens, 2, 0, 0, &added) == KEYROUTE_OK &&
                  added == 2,
              "seed on the cluster");
        uint8_t out[16];
        size_t len = 0;
        CHECK(keyroute_least_used_pick(lu, out, sizeof out, &len) == KEYROUTE_OK && len == 2,
              "pick on the cluster");
        keyroute_least_used_free(lu);
    }

    struct keyroute_cache_options o;
    CHECK(keyroute_cache_options_default(&o) == KEYROUTE_OK, "cache options");
    struct keyroute_cache *cache = NULL;
    CHECK(keyroute_cache_open_cluster(seeds, n, &o, &cache) == KEYROUTE_OK,
          "cache_open_cluster as the ACL user");
    if (cache != NULL) {
        uint8_t *v = NULL;
        size_t len = 0;
        for (int i = 0; i < 2; i++) {
            CHECK(keyroute_cache_get_or_load(cache, "c-acl", "cards", 5000, cards_loader, NULL,
                                             &v, &len) == KEYROUTE_OK &&
                      len == 5 && memcmp(v, "cards", 5) == 0,
                  "filled, then served");
            if (v != NULL) keyroute_value_free(v);
            v = NULL;
        }
        keyroute_cache_free(cache);
    }

    /* The same seeds with a wrong password: REDIS_AUTH, the password nowhere. */
    char wrong[MAX_SEEDS][512];
    const char *wrong_seeds[MAX_SEEDS];
    for (size_t i = 0; i < n; i++) {
        const char *at = strchr(seeds[i], '@');
        snprintf(wrong[i], sizeof wrong[i], "redis://keyroute:%sx%s", password, at ? at : "");
        wrong_seeds[i] = wrong[i];
    }
    lu = NULL;
    enum keyroute_status st =
        keyroute_least_used_open_cluster(wrong_seeds, n, key, sizeof key - 1, 3000, &lu);
    CHECK(st == KEYROUTE_REDIS_AUTH, "a wrong password on the cluster is KEYROUTE_REDIS_AUTH");
    CHECK(strstr(keyroute_last_error_message(), password) == NULL, "no password in the message");
    if (lu != NULL) keyroute_least_used_free(lu);
    cache = NULL;
    st = keyroute_cache_open_cluster(wrong_seeds, n, &o, &cache);
    CHECK(st == KEYROUTE_REDIS_AUTH, "a wrong password (cache) is KEYROUTE_REDIS_AUTH");
    CHECK(strstr(keyroute_last_error_message(), password) == NULL, "no password in the message");
    if (cache != NULL) keyroute_cache_free(cache);
}

int main(int argc, char **argv)
{
    int with_cluster = argc > 1 && strcmp(argv[1], "--acl-cluster") == 0;
    const char *url = env("KEYROUTE_TEST_TLS_URL");
    const char *wrong_ca = env("KEYROUTE_TEST_TLS_WRONG_CA_URL");
    const char *password = env("KEYROUTE_TEST_TLS_PASSWORD");
    const uint8_t key[] = "{c-tls}:pool";
    size_t key_len = sizeof key - 1;

    struct keyroute_least_used *lu = NULL;
    CHECK(keyroute_least_used_open(url, key, key_len, 3000, &lu) == KEYROUTE_OK, "open over TLS");
    if (lu != NULL) {
        const uint8_t *members[] = {(const uint8_t *)"p1", (const uint8_t *)"p2"};
        size_t lens[] = {2, 2};
        size_t added = 0;
        CHECK(keyroute_least_used_seed(lu, members, lens, 2, 0, 0, &added) == KEYROUTE_OK,
              "seed over TLS");
        CHECK(added == 2, "two members added");
        uint8_t buf[16];
        size_t len = 0;
        CHECK(keyroute_least_used_pick(lu, buf, sizeof buf, &len) == KEYROUTE_OK, "pick");
        CHECK(len == 2 && memcmp(buf, "p1", 2) == 0, "the least used, byte order first");
        CHECK(keyroute_least_used_free(lu) == KEYROUTE_OK, "free");
    }

    lu = NULL;
    enum keyroute_status st = keyroute_least_used_open(wrong_ca, key, key_len, 3000, &lu);
    CHECK(st == KEYROUTE_REDIS_TLS, "an untrusted certificate is KEYROUTE_REDIS_TLS");
    CHECK(strstr(keyroute_last_error_message(), password) == NULL, "no password in the message");
    if (lu != NULL) keyroute_least_used_free(lu);

    char wrong_pw[2048];
    const char *at = strchr(url, '@');
    snprintf(wrong_pw, sizeof wrong_pw, "rediss://:%sx%s", password, at);
    lu = NULL;
    st = keyroute_least_used_open(wrong_pw, key, key_len, 3000, &lu);
    CHECK(st == KEYROUTE_REDIS_AUTH, "a wrong password is KEYROUTE_REDIS_AUTH");
    CHECK(strstr(keyroute_last_error_message(), password) == NULL, "no password in the message");
    if (lu != NULL) keyroute_least_used_free(lu);

    if (with_cluster) acl_cluster();

    if (failures) {
        fprintf(stderr, "test_tls: %d failure(s)\n", failures);
        return 1;
    }
    puts(with_cluster ? "test_tls: 3 passed, and the ACL cluster, 0 failed"
                      : "test_tls: 3 passed, 0 failed");
    return 0;
}
