/* The C library on a TLS-only, password-protected redis-server (tests/with_tls_redis.sh):
 * a least-used pool seeded and picked over rediss:// with ssl_ca_certs; a CA that did not
 * sign the server's certificate is KEYROUTE_REDIS_TLS; a wrong password is
 * KEYROUTE_REDIS_AUTH; no message shows the password. */
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
        fprintf(stderr, "test_tls: %s is not set: run under tests/with_tls_redis.sh\n", name);
        exit(2);
    }
    return v;
}

int main(void)
{
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

    if (failures) {
        fprintf(stderr, "test_tls: %d failure(s)\n", failures);
        return 1;
    }
    puts("test_tls: 3 passed, 0 failed");
    return 0;
}
