/*
 * keyroute_router: every case of tests/vectors/fleet/ (each .json) (answers recorded from the real
 * nginx, HAProxy, nutcracker, spymemcached, Guava, redis-rb, Predis, pymemcache,
 * groupcache, ...), built as tests/vectors/fleet_routes.json says (lines from
 * fleet_to_lines.py), and the entrance checks of keyroute_router_new and
 * keyroute_router_from_config with their statuses. C99 and C++.
 */
#include <math.h>

#include "testing.h"

#define MAXN 2048

static long routes, keys_checked;

typedef struct {
    char *names[MAXN];
    int64_t weights[MAXN];
    size_t n;
    char *opt_names[64], *opt_values[64];
    size_t nopt;
    char *config, *pool;
    size_t config_len;
    int allow_down;
    char *res_hosts[8];
    uint32_t res_counts[8];
    size_t nres;
    char engine[64], where[200];
    keyroute_router *router;
    int built;
} route;

static void route_reset(route *r)
{
    size_t i;
    for (i = 0; i < r->n; i++)
        free(r->names[i]);
    for (i = 0; i < r->nopt; i++) {
        free(r->opt_names[i]);
        free(r->opt_values[i]);
    }
    for (i = 0; i < r->nres; i++)
        free(r->res_hosts[i]);
    free(r->config);
    free(r->pool);
    ST(keyroute_router_free(r->router), KEYROUTE_OK);
    memset(r, 0, sizeof *r);
}

static void route_build(route *r)
{
    keyroute_status st;
    if (r->built)
        return;
    r->built = 1;
    if (r->config) {
        keyroute_config_options o;
        memset(&o, 0, sizeof o);
        o.file = r->where;
        o.allow_down = r->allow_down;
        o.resolved_hosts = (const char *const *)r->res_hosts;
        o.resolved_counts = r->res_counts;
        o.resolved_count = r->nres;
        st = keyroute_router_from_config(B(r->config), r->config_len, r->pool, &o, &r->router);
    } else {
        st = keyroute_router_new(r->engine, (const char *const *)r->names, r->weights, r->n,
                                 (const char *const *)r->opt_names,
                                 (const char *const *)r->opt_values, r->nopt, &r->router);
    }
    CHECKD(st == KEYROUTE_OK, r->where);
    if (st != KEYROUTE_OK)
        fprintf(stderr, "  %s: %s\n", r->where, keyroute_last_error_message());
    routes++;
}

static void run(const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL, *fields[8];
    size_t cap = 0;
    route r;
    memset(&r, 0, sizeof r);
    if (!f) {
        perror(path);
        exit(2);
    }
    while (read_line(f, &line, &cap)) {
        size_t nf = split(line, fields, 8);
        if (nf == 0)
            continue;
        if (strcmp(fields[0], "router") == 0 && nf == 4) {
            snprintf(r.engine, sizeof r.engine, "%s", fields[1]);
            snprintf(r.where, sizeof r.where, "%s#%s", fields[2], fields[3]);
        } else if (strcmp(fields[0], "config") == 0 && nf == 4) {
            r.config = unhex(fields[1], &r.config_len);
            r.pool = unhex(fields[2], NULL);
            r.allow_down = atoi(fields[3]);
        } else if (strcmp(fields[0], "resolved") == 0 && nf == 3 && r.nres < 8) {
            r.res_hosts[r.nres] = unhex(fields[1], NULL);
            r.res_counts[r.nres++] = (uint32_t)strtoul(fields[2], NULL, 10);
        } else if (strcmp(fields[0], "node") == 0 && nf == 3 && r.n < MAXN) {
            r.names[r.n] = unhex(fields[1], NULL);
            r.weights[r.n++] = strtoll(fields[2], NULL, 10);
        } else if (strcmp(fields[0], "option") == 0 && nf == 3 && r.nopt < 64) {
            r.opt_names[r.nopt] = unhex(fields[1], NULL);
            r.opt_values[r.nopt++] = unhex(fields[2], NULL);
        } else if (strcmp(fields[0], "add") == 0 && nf == 3) {
            char *name = unhex(fields[1], NULL);
            route_build(&r);
            if (r.router) {
                keyroute_status st = keyroute_router_add(r.router, name, strtoll(fields[2], NULL, 10));
                CHECKD(st == KEYROUTE_OK, r.where);
            }
            free(name);
        } else if (strcmp(fields[0], "remove") == 0 && nf == 2) {
            char *name = unhex(fields[1], NULL);
            route_build(&r);
            if (r.router)
                CHECKD(keyroute_router_remove(r.router, name) == KEYROUTE_OK, r.where);
            free(name);
        } else if (strcmp(fields[0], "key") == 0 && nf == 3) {
            size_t klen, wlen, glen = 0;
            char *key = unhex(fields[1], &klen), *want = unhex(fields[2], &wlen);
            const char *got = NULL;
            route_build(&r);
            if (r.router) {
                ST(keyroute_router_get(r.router, B(key), klen, &got, &glen), KEYROUTE_OK);
                CHECKD(got && same(got, glen, want, wlen), r.where);
                keys_checked++;
            }
            free(key);
            free(want);
        } else if (strcmp(fields[0], "end") == 0) {
            route_build(&r);
            route_reset(&r);
        } else {
            fprintf(stderr, "bad line: %s\n", fields[0]);
            exit(2);
        }
    }
    free(line);
    fclose(f);
}

static void test_api(void)
{
    const char *names[] = {"a", "b", "c", "d"};
    int64_t weights[] = {1, 1, 1, 1};
    const char *on[] = {"table_size"}, *ov[] = {"1009"}, *bad[] = {"100"};
    const char *engines[] = {"jump", "guava-jump", "rendezvous", "maglev", "nginx", "go-redis",
                             "native"};
    keyroute_router *r = NULL;
    const char *name = NULL, *cands[4];
    size_t i, idx, count, len, many[3], order[8];
    uint32_t w;
    const uint8_t *ks[] = {B("x"), B("y"), B("z")};
    size_t kl[] = {1, 1, 1};
    uint32_t ends[] = {1, 2, 3}, down[] = {1, 0, 3}, packed[3];
    (void)cands;
    for (i = 0; i < sizeof engines / sizeof *engines; i++) {
        ST(keyroute_router_new(engines[i], names, NULL, 4, NULL, NULL, 0, &r), KEYROUTE_OK);
        CHECK(strcmp(keyroute_router_engine(r), engines[i]) == 0);
        CHECK(keyroute_router_len(r) == 4);
        CHECK(keyroute_router_format(r) == NULL);
        ST(keyroute_router_get(r, B("user:1"), 6, &name, &len), KEYROUTE_OK);
        ST(keyroute_router_get_index(r, B("user:1"), 6, &idx), KEYROUTE_OK);
        ST(keyroute_router_get_n(r, B("user:1"), 6, 8, order, &count), KEYROUTE_OK);
        CHECK(count == 4 && order[0] == idx && strcmp(names[idx], name) == 0);
        ST(keyroute_router_get_many(r, ks, kl, 3, many), KEYROUTE_OK);
        CHECK(many[0] < 4 && many[1] < 4 && many[2] < 4);
        ST(keyroute_router_get_many_packed(r, B("xyz"), 3, ends, 3, packed), KEYROUTE_OK);
        CHECK(packed[0] == many[0] && packed[1] == many[1] && packed[2] == many[2]);
        ST(keyroute_router_get_many_packed(r, B("xyz"), 3, down, 3, packed),
           KEYROUTE_OUT_OF_RANGE);
        ST(keyroute_router_node(r, 2, &name, &len, &w), KEYROUTE_OK);
        CHECK(strcmp(name, "c") == 0 && len == 1 && w == 1);
        ST(keyroute_router_node(r, 4, &name, NULL, NULL), KEYROUTE_OUT_OF_RANGE);
        ST(keyroute_router_free(r), KEYROUTE_OK);
    }
    ST(keyroute_router_new("maglev", names, weights, 4, on, ov, 1, &r), KEYROUTE_OK);
    ST(keyroute_router_free(r), KEYROUTE_OK);
    r = NULL;
    STM(keyroute_router_new("maglev", names, NULL, 4, on, bad, 1, &r), KEYROUTE_BAD_OPTION,
        "table_size");
    CHECK(r == NULL);
    ST(keyroute_router_new("nope", names, NULL, 4, NULL, NULL, 0, &r), KEYROUTE_UNKNOWN_PROFILE);
    ST(keyroute_router_new(NULL, names, NULL, 4, NULL, NULL, 0, &r), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_router_new("jump", NULL, NULL, 4, NULL, NULL, 0, &r), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_router_new("jump", names, NULL, 4, NULL, NULL, 0, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_router_new("jump", names, NULL, 4, on, ov, 65, &r), KEYROUTE_TOO_LARGE);
    ST(keyroute_router_new("jump", names, NULL, (size_t)1 << 40, NULL, NULL, 0, &r),
       KEYROUTE_TOO_LARGE);
    {
        const char *dup[] = {"a", "a"}, *bad8[] = {"\xff"};
        int64_t zero[] = {0, 1}, neg[] = {-1, 1};
        ST(keyroute_router_new("jump", dup, NULL, 2, NULL, NULL, 0, &r), KEYROUTE_DUPLICATE_NODE);
        ST(keyroute_router_new("rendezvous", names, zero, 2, NULL, NULL, 0, &r),
           KEYROUTE_ZERO_WEIGHT);
        ST(keyroute_router_new("rendezvous", names, neg, 2, NULL, NULL, 0, &r),
           KEYROUTE_NEGATIVE_WEIGHT);
        ST(keyroute_router_new("jump", bad8, NULL, 1, NULL, NULL, 0, &r), KEYROUTE_BAD_UTF8);
    }
    /* Configurations. */
    {
        const char *cfg = "backend app\n    balance uri\n    hash-type consistent\n"
                          "    server web1 10.0.0.1:80\n    server web2 10.0.0.2:80 weight 2\n";
        const char *backup = "backend app\n    balance uri\n    hash-type consistent\n"
                             "    server web1 10.0.0.1:80 backup\n";
        const char *nginx = "http {\n upstream u {\n  hash $uri consistent;\n"
                            "  include more.conf;\n }\n}\n";
        const char *inc_names[] = {"more.conf"}, *inc_texts[] = {"server 10.0.0.9:80;\n"};
        keyroute_config_options o;
        memset(&o, 0, sizeof o);
        o.file = "h.cfg";
        ST(keyroute_router_from_config(B(cfg), strlen(cfg), NULL, &o, &r), KEYROUTE_OK);
        CHECK(strcmp(keyroute_router_format(r), "haproxy") == 0);
        CHECK(strcmp(keyroute_router_config_key(r), "uri") == 0);
        CHECK(strcmp(keyroute_router_engine(r), "haproxy") == 0);
        ST(keyroute_router_node(r, 1, &name, NULL, &w), KEYROUTE_OK);
        CHECK(strcmp(name, "web2") == 0 && w == 2);
        CHECK(strcmp(keyroute_router_node_address(r, 1), "10.0.0.2:80") == 0);
        CHECK(keyroute_router_node_address(r, 2) == NULL);
        ST(keyroute_router_free(r), KEYROUTE_OK);
        STM(keyroute_router_from_config(B(backup), strlen(backup), "app", &o, &r),
            KEYROUTE_UNSUPPORTED_CONFIG, "h.cfg:4:");
        STM(keyroute_router_from_config(B(nginx), strlen(nginx), "u", NULL, &r),
            KEYROUTE_UNSUPPORTED_CONFIG, "include");
        o.include_names = inc_names;
        o.include_texts = inc_texts;
        o.include_count = 1;
        ST(keyroute_router_from_config(B(nginx), strlen(nginx), "u", &o, &r), KEYROUTE_OK);
        ST(keyroute_router_node(r, 0, &name, NULL, NULL), KEYROUTE_OK);
        CHECK(strcmp(name, "10.0.0.9:80") == 0);
        ST(keyroute_router_free(r), KEYROUTE_OK);
        ST(keyroute_router_from_config(B("http { }\n"), 9, NULL, NULL, &r), KEYROUTE_BAD_CONFIG);
        ST(keyroute_router_from_config(B("\xff"), 1, NULL, NULL, &r), KEYROUTE_BAD_UTF8);
        ST(keyroute_router_from_config(NULL, 5, NULL, NULL, &r), KEYROUTE_NULL_ARGUMENT);
        o.include_count = 65;
        ST(keyroute_router_from_config(B(nginx), strlen(nginx), "u", &o, &r), KEYROUTE_TOO_LARGE);
    }
    /* Handles. */
    ST(keyroute_router_get(NULL, B("k"), 1, &name, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_router_free(NULL), KEYROUTE_OK);
    CHECK(keyroute_router_len(NULL) == 0 && keyroute_router_engine(NULL) == NULL);
}

static void test_bounded(void)
{
    const char *names[] = {"a", "b", "c", "d"};
    keyroute_router *r = NULL;
    keyroute_bounded *b = NULL;
    char key[32];
    size_t i, j, idx, moved, from, to, keylen, total_moves = 0;
    const uint8_t *kp;
    uint64_t load, sum;
    ST(keyroute_router_new("native", names, NULL, 4, NULL, NULL, 0, &r), KEYROUTE_OK);
    ST(keyroute_bounded_new(r, 1.25, &b), KEYROUTE_OK);
    ST(keyroute_router_free(r), KEYROUTE_OK); /* the overlay keeps its own copy */
    for (i = 0; i < 400; i++) {
        snprintf(key, sizeof key, "job-%u", (unsigned)i);
        ST(keyroute_bounded_assign(b, B(key), strlen(key), &idx), KEYROUTE_OK);
        CHECK(idx < 4);
        for (j = 0; j < 4; j++) {
            ST(keyroute_bounded_node(b, j, NULL, &load), KEYROUTE_OK);
            CHECK(load <= keyroute_bounded_cap(b));
        }
    }
    CHECK(keyroute_bounded_assigned(b) == 400 && keyroute_bounded_cap(b) == 125);
    for (i = 0; i < 400; i += 3) {
        snprintf(key, sizeof key, "job-%u", (unsigned)i);
        ST(keyroute_bounded_release(b, B(key), strlen(key), &moved), KEYROUTE_OK);
        for (j = 0; j < moved; j++) {
            ST(keyroute_bounded_moved(b, j, &kp, &keylen, &from, &to), KEYROUTE_OK);
            CHECK(from != to && from < 4 && to < 4 && keylen > 0);
            total_moves++;
        }
        ST(keyroute_bounded_moved(b, moved, &kp, NULL, NULL, NULL), KEYROUTE_OUT_OF_RANGE);
        sum = 0;
        for (j = 0; j < 4; j++) {
            ST(keyroute_bounded_node(b, j, NULL, &load), KEYROUTE_OK);
            CHECK(load <= keyroute_bounded_cap(b));
            sum += load;
        }
        CHECK(sum == keyroute_bounded_assigned(b));
    }
    (void)total_moves;
    ST(keyroute_bounded_release(b, B("job-0"), 5, &moved), KEYROUTE_EMPTY);
    ST(keyroute_bounded_node(b, 4, NULL, NULL), KEYROUTE_OUT_OF_RANGE);
    ST(keyroute_bounded_free(b), KEYROUTE_OK);
    ST(keyroute_router_new("native", names, NULL, 4, NULL, NULL, 0, &r), KEYROUTE_OK);
    ST(keyroute_bounded_new(r, 0.5, &b), KEYROUTE_BAD_OPTION);
    ST(keyroute_bounded_new(r, NAN, &b), KEYROUTE_BAD_OPTION);
    ST(keyroute_bounded_new(NULL, 1.5, &b), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_bounded_new(r, 1.5, NULL), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_bounded_assign(NULL, B("k"), 1, &idx), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_router_free(r), KEYROUTE_OK);
}

/* keyroute_router_add / _remove: the reference Java ring's history (BB's removal takes
 * Aa's points: the same hashCode), a build over the new list elsewhere, the codes. */
static void test_changes(void)
{
    const char *none[] = {NULL}, *ab[] = {"a", "b"}, *ac[] = {"Aa", "cache3"};
    const char *prefix[] = {"redis-1", "redis-2"}, *on[] = {"node"}, *ov[] = {"prefix"};
    const char *ts[] = {"table_size"}, *tv[] = {"1009"};
    int64_t w12[] = {1, 2}, w23[] = {2, 3};
    const char *bc[] = {"b", "c"};
    keyroute_router *r = NULL, *built = NULL, *m = NULL, *want = NULL, *p = NULL;
    const char *name = NULL, *other = NULL;
    size_t i, len, aa = 0;
    uint32_t w;
    char key[32];
    ST(keyroute_router_new("java-hashcode", none, NULL, 0, NULL, NULL, 0, &r), KEYROUTE_OK);
    ST(keyroute_router_add(r, "Aa", 1), KEYROUTE_OK);
    ST(keyroute_router_add(r, "BB", 1), KEYROUTE_OK);
    ST(keyroute_router_add(r, "cache3", 1), KEYROUTE_OK);
    ST(keyroute_router_remove(r, "BB"), KEYROUTE_OK);
    CHECK(keyroute_router_len(r) == 2);
    ST(keyroute_router_node(r, 1, &name, &len, &w), KEYROUTE_OK);
    CHECK(strcmp(name, "cache3") == 0);
    ST(keyroute_router_new("java-hashcode", ac, NULL, 2, NULL, NULL, 0, &built), KEYROUTE_OK);
    for (i = 0; i < 300; i++) {
        /* Keys spread over the circle: String.hashCode of k0, k1, ... are neighbours. */
        snprintf(key, sizeof key, "%08lx%lu", (unsigned long)(i * 2654435761u), (unsigned long)i);
        ST(keyroute_router_get(r, B(key), strlen(key), &name, NULL), KEYROUTE_OK);
        CHECK(strcmp(name, "cache3") == 0);
        ST(keyroute_router_get(built, B(key), strlen(key), &other, NULL), KEYROUTE_OK);
        aa += strcmp(other, "Aa") == 0;
    }
    CHECK(aa > 0);
    ST(keyroute_router_add(r, "x", 2), KEYROUTE_BAD_OPTION);
    ST(keyroute_router_add(r, "Aa", 1), KEYROUTE_DUPLICATE_NODE);
    ST(keyroute_router_add(r, "", 1), KEYROUTE_EMPTY_NODE_NAME);
    ST(keyroute_router_add(r, "x", 0), KEYROUTE_ZERO_WEIGHT);
    ST(keyroute_router_add(r, "x", -1), KEYROUTE_NEGATIVE_WEIGHT);
    ST(keyroute_router_add(r, "\xff", 1), KEYROUTE_BAD_UTF8);
    ST(keyroute_router_add(r, NULL, 1), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_router_add(NULL, "x", 1), KEYROUTE_NULL_ARGUMENT);
    ST(keyroute_router_remove(r, "nope"), KEYROUTE_UNKNOWN_NODE);
    CHECK(keyroute_router_len(r) == 2);
    /* Elsewhere: a build over the new list, options kept. */
    ST(keyroute_router_new("maglev", ab, w12, 2, ts, tv, 1, &m), KEYROUTE_OK);
    ST(keyroute_router_add(m, "c", 3), KEYROUTE_OK);
    ST(keyroute_router_remove(m, "a"), KEYROUTE_OK);
    ST(keyroute_router_new("maglev", bc, w23, 2, ts, tv, 1, &want), KEYROUTE_OK);
    ST(keyroute_router_node(m, 1, &name, NULL, &w), KEYROUTE_OK);
    CHECK(strcmp(name, "c") == 0 && w == 3);
    for (i = 0; i < 300; i++) {
        snprintf(key, sizeof key, "k%lu", (unsigned long)i);
        ST(keyroute_router_get(m, B(key), strlen(key), &name, NULL), KEYROUTE_OK);
        ST(keyroute_router_get(want, B(key), strlen(key), &other, NULL), KEYROUTE_OK);
        CHECK(strcmp(name, other) == 0);
    }
    /* node=prefix: names shown before the first '-', removed by their own names. */
    ST(keyroute_router_new("java-hashcode", prefix, NULL, 2, on, ov, 1, &p), KEYROUTE_OK);
    ST(keyroute_router_node(p, 1, &name, NULL, NULL), KEYROUTE_OK);
    CHECK(strcmp(name, "redis") == 0);
    ST(keyroute_router_remove(p, "redis"), KEYROUTE_UNKNOWN_NODE);
    ST(keyroute_router_remove(p, "redis-2"), KEYROUTE_OK);
    CHECK(keyroute_router_len(p) == 1);
    {
        const char *cfg = "backend app\n    balance uri\n    hash-type consistent\n"
                          "    server w1 10.0.0.1:80\n";
        keyroute_router *c = NULL;
        ST(keyroute_router_from_config(B(cfg), strlen(cfg), NULL, NULL, &c), KEYROUTE_OK);
        ST(keyroute_router_add(c, "w2", 1), KEYROUTE_UNSUPPORTED_CONFIG);
        ST(keyroute_router_remove(c, "w1"), KEYROUTE_UNSUPPORTED_CONFIG);
        CHECK(keyroute_router_len(c) == 1);
        ST(keyroute_router_free(c), KEYROUTE_OK);
    }
    ST(keyroute_router_free(r), KEYROUTE_OK);
    ST(keyroute_router_free(built), KEYROUTE_OK);
    ST(keyroute_router_free(m), KEYROUTE_OK);
    ST(keyroute_router_free(want), KEYROUTE_OK);
    ST(keyroute_router_free(p), KEYROUTE_OK);
}

int main(int argc, char **argv)
{
    test_api();
    test_changes();
    test_bounded();
    if (argc > 1)
        run(argv[1]);
    printf("keyroute C fleet tests: %ld checks, %ld failed; %ld routes, %ld keys\n", checks,
           failures, routes, keys_checked);
    if (argc > 1 && keys_checked < 20000) {
        fputs("too few fleet vector keys read\n", stderr);
        return 1;
    }
    return failures ? 1 : 0;
}
