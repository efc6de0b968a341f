/*
 * test-dist: built against the unpacked C tarball from dist/ through pkg-config
 * (PKG_CONFIG_PATH=<tarball>/lib/pkgconfig) and run with LD_LIBRARY_PATH=<tarball>/lib
 * only. Reads the case file of case.py and prints each key's node, one per line.
 */
#include <stdio.h>
#include <string.h>

#include <keyroute.h>

static char profile[256], spec[65536], key[4096];

static int line(FILE *f, char *buf, size_t size)
{
    size_t n;
    if (!fgets(buf, (int)size, f))
        return 0;
    n = strlen(buf);
    if (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    return 1;
}

int main(int argc, char **argv)
{
    keyroute_ring *ring = NULL;
    keyroute_status st;
    FILE *f;

    if (argc != 2 || !(f = fopen(argv[1], "r"))) {
        fprintf(stderr, "usage: lookup CASE_FILE\n");
        return 2;
    }
    if (!line(f, profile, sizeof profile) || !line(f, spec, sizeof spec)) {
        fprintf(stderr, "lookup: short case file\n");
        return 2;
    }
    st = keyroute_ring_from_spec(profile, NULL, spec, &ring);
    if (st != KEYROUTE_OK) {
        fprintf(stderr, "keyroute_ring_from_spec: %s: %s\n", keyroute_status_name(st),
                keyroute_last_error_message());
        return 1;
    }
    while (line(f, key, sizeof key)) {
        const char *node;
        size_t len;
        st = keyroute_ring_get(ring, (const uint8_t *)key, strlen(key), &node, &len);
        if (st != KEYROUTE_OK) {
            fprintf(stderr, "keyroute_ring_get: %s: %s\n", keyroute_status_name(st),
                    keyroute_last_error_message());
            keyroute_ring_free(ring);
            return 1;
        }
        printf("%.*s\n", (int)len, node);
    }
    keyroute_ring_free(ring);
    fclose(f);
    return 0;
}
