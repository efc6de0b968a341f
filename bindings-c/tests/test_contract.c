/*
 * The entrance contract (tests/contract/bad_inputs.json) in C: every case C can express,
 * as lines from contract_to_lines.py, must give its status (KEYROUTE_ + the case's code,
 * by name and by number) and, for ok cases, its values. Cases C cannot express (a string
 * where a list is meant, a weight that is no int64_t, ...) are listed with their reason
 * in the table; the C-only cases (NULL pointers, SIZE_MAX counts, handles) are in
 * test_keyroute.c.
 *
 *   test_contract CONTRACT.txt
 *
 * Builds as C99 (-std=c99 -Wall -Wextra -Werror -pedantic) and as C++.
 */
#include "testing.h"

static long cases_run;

/* Reads RING (PROFILE VNODES PPD PORT N (NAME WEIGHT)*N) and builds it node by node:
 * the status of the first call that fails, or KEYROUTE_OK with *out set. */
static keyroute_status ring_of(cursor *c, keyroute_ring **out)
{
    keyroute_ring_options o;
    const char *profile = next_field(c);
    size_t n, i;
    keyroute_status st;

    memset(&o, 0, sizeof o);
    o.vnodes = next_i64(c);
    o.points_per_digest = next_i64(c);
    o.default_port = next_i64(c);
    n = (size_t)next_u64(c);
    *out = NULL;
    st = keyroute_ring_new(profile, &o, out);
    for (i = 0; i < n; i++) {
        char *name = next_text(c, NULL);
        long long w = next_i64(c);
        if (st == KEYROUTE_OK)
            st = keyroute_ring_add(*out, name, w);
        free(name);
    }
    if (st != KEYROUTE_OK) {
        ST(keyroute_ring_free(*out), KEYROUTE_OK);
        *out = NULL;
    }
    return st;
}

/* Reads N MEMBER*N. */
static members members_of(cursor *c)
{
    size_t n = (size_t)next_u64(c);
    members ms;
    if (c->i + n > c->n) {
        c->bad = 1;
        n = 0;
    }
    ms = members_unhex(c->f + c->i, n);
    c->i += n;
    return ms;
}

/* Splits "host:port" (the last ':'; brackets removed) into a new host string. */
static char *split_addr(const char *addr, long long *port)
{
    const char *colon = strrchr(addr, ':');
    size_t n = colon ? (size_t)(colon - addr) : strlen(addr);
    char *host;
    if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
        addr++;
        n -= 2;
    }
    host = (char *)xmalloc(n + 1);
    memcpy(host, addr, n);
    host[n] = '\0';
    *port = colon ? atoll(colon + 1) : 0;
    return host;
}

/* parse_nodes through keyroute_ring_from_spec: the ring's nodes are the parsed list. */
static keyroute_status op_parse_nodes(cursor *c, int ok, const char *id)
{
    char *text = next_text(c, NULL);
    keyroute_ring *r = NULL;
    keyroute_status st = keyroute_ring_from_spec("native", NULL, text, &r);
    if (ok && st == KEYROUTE_OK) {
        size_t n = (size_t)next_u64(c), i;
        CHECKD(keyroute_ring_len(r) == n, id);
        for (i = 0; i < n; i++) {
            size_t wl;
            char *want = next_text(c, &wl);
            long long w = next_i64(c);
            const char *name = NULL;
            size_t len = 0;
            uint32_t weight = 0;
            ST(keyroute_ring_node(r, i, &name, &len, &weight), KEYROUTE_OK);
            CHECKD(name && same(name, len, want, wl) && (long long)weight == w, id);
            free(want);
        }
    }
    ST(keyroute_ring_free(r), KEYROUTE_OK);
    free(text);
    return st;
}

/* parse_weights through keyroute_plan_from_spec on a map whose masters are the listed
 * names (as node ids), the first owning every slot: the plan's targets are the list. */
static keyroute_status op_parse_weights(cursor *c, int ok, const char *id)
{
    char *text = next_text(c, NULL);
    keyroute_slot_map *m = NULL;
    keyroute_plan *p = NULL;
    keyroute_status st;
    size_t n = 0, i;
    char **names = NULL;
    long long *weights = NULL;

    ST(keyroute_slot_map_new(&m), KEYROUTE_OK);
    if (ok) {
        n = (size_t)next_u64(c);
        names = (char **)xmalloc(n * sizeof *names);
        weights = (long long *)xmalloc(n * sizeof *weights);
        for (i = 0; i < n; i++) {
            names[i] = next_text(c, NULL);
            weights[i] = next_i64(c);
            ST(keyroute_slot_map_add_master(m, names[i], "192.0.2.1", (int64_t)(1 + i), NULL),
               KEYROUTE_OK);
        }
        if (n > 0)
            ST(keyroute_slot_map_assign(m, 0, 16383, 0), KEYROUTE_OK);
    }
    st = keyroute_plan_from_spec(m, text, &p);
    if (ok && st == KEYROUTE_OK) {
        CHECKD(keyroute_plan_target_count(p) == n, id);
        for (i = 0; i < n; i++) {
            size_t node = SIZE_MAX;
            uint64_t w = 99;
            ST(keyroute_plan_target(p, i, &node, &w, NULL, NULL, NULL), KEYROUTE_OK);
            CHECKD(node == i && (long long)w == weights[i], id);
        }
    }
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(weights);
    ST(keyroute_plan_free(p), KEYROUTE_OK);
    ST(keyroute_slot_map_free(m), KEYROUTE_OK);
    free(text);
    return st;
}

static keyroute_status op_ring(cursor *c, int ok, const char *id)
{
    keyroute_ring *r = NULL;
    keyroute_status st = ring_of(c, &r);
    if (ok && st == KEYROUTE_OK) {
        size_t n = (size_t)next_u64(c), i;
        CHECKD(keyroute_ring_len(r) == n, id);
        for (i = 0; i < n; i++) {
            size_t wl, len = 0;
            char *want = next_text(c, &wl);
            const char *name = NULL;
            ST(keyroute_ring_node(r, i, &name, &len, NULL), KEYROUTE_OK);
            CHECKD(name && same(name, len, want, wl), id);
            free(want);
        }
    }
    ST(keyroute_ring_free(r), KEYROUTE_OK);
    return st;
}

static keyroute_status op_ring_change(cursor *c, const char *id)
{
    keyroute_ring *r = NULL;
    keyroute_status st = ring_of(c, &r);
    const char *change = next_field(c);
    char *name = next_text(c, NULL);
    long long w = next_i64(c);
    CHECKD(st == KEYROUTE_OK, id); /* the ring itself is valid */
    if (strcmp(change, "add") == 0)
        st = keyroute_ring_add(r, name, w);
    else if (strcmp(change, "remove") == 0)
        st = keyroute_ring_remove(r, name);
    else if (strcmp(change, "set_weight") == 0)
        st = keyroute_ring_set_weight(r, name, w);
    else
        CHECKD(0, change);
    free(name);
    ST(keyroute_ring_free(r), KEYROUTE_OK);
    return st;
}

static keyroute_status op_ring_get_n(cursor *c, int ok, const char *id)
{
    keyroute_ring *r = NULL;
    keyroute_status st = ring_of(c, &r);
    size_t kl;
    char *key = next_text(c, &kl);
    size_t n = (size_t)next_u64(c), len = keyroute_ring_len(r), count = 0;
    const char **names = (const char **)xmalloc((len ? len : 1) * sizeof *names);
    if (st == KEYROUTE_OK) /* n may exceed the ring: the arrays hold one entry per node */
        st = keyroute_ring_get_n(r, B(key), kl, n, names, NULL, &count);
    if (ok && st == KEYROUTE_OK)
        CHECKD(count == (size_t)next_u64(c), id);
    free((void *)names);
    free(key);
    ST(keyroute_ring_free(r), KEYROUTE_OK);
    return st;
}

static keyroute_status op_diff(cursor *c, const char *id)
{
    keyroute_ring *a = NULL, *b = NULL;
    keyroute_diff *d = NULL;
    keyroute_status st;
    CHECKD(ring_of(c, &a) == KEYROUTE_OK && ring_of(c, &b) == KEYROUTE_OK, id);
    st = keyroute_ring_diff(a, b, &d);
    ST(keyroute_diff_free(d), KEYROUTE_OK);
    ST(keyroute_ring_free(a), KEYROUTE_OK);
    ST(keyroute_ring_free(b), KEYROUTE_OK);
    return st;
}

static keyroute_status op_pool_seed(cursor *c, int ok, const char *id)
{
    keyroute_pool *p = NULL;
    unsigned long long initial = next_u64(c);
    members ms = members_of(c);
    size_t added = 12345;
    keyroute_status st;
    ST(keyroute_pool_new(&p), KEYROUTE_OK);
    st = keyroute_pool_seed(p, ms.ptrs, ms.lens, ms.n, initial, 0, &added);
    if (ok && st == KEYROUTE_OK)
        CHECKD(added == (size_t)next_u64(c), id);
    if (st != KEYROUTE_OK)
        CHECKD(added == 12345 && keyroute_pool_len(p) == 0, id); /* nothing changed */
    members_free(ms);
    ST(keyroute_pool_free(p), KEYROUTE_OK);
    return st;
}

static keyroute_status op_pool_restore(cursor *c, int ok, const char *id)
{
    keyroute_pool *p = NULL;
    size_t ml;
    char *m = next_text(c, &ml);
    int mode = (int)next_i64(c);
    uint64_t count = 77;
    keyroute_status st;
    ST(keyroute_pool_new(&p), KEYROUTE_OK);
    st = keyroute_pool_restore(p, B(m), ml, mode, &count);
    if (ok && st == KEYROUTE_OK)
        CHECKD(count == next_u64(c), id);
    if (st != KEYROUTE_OK)
        CHECKD(count == 77 && keyroute_pool_len(p) == 0, id);
    free(m);
    ST(keyroute_pool_free(p), KEYROUTE_OK);
    return st;
}

static keyroute_status op_pool_pick_many(cursor *c, int ok, const char *id)
{
    keyroute_pool *p = NULL;
    size_t n = (size_t)next_u64(c), count = 99;
    members ms = members_of(c);
    /* Arrays with room for n picks when n can be picked in one call (2^24); beyond, none
     * could exist: NULL, and the count must be refused first. */
    int fits = n <= ((size_t)1 << 24);
    const uint8_t **picks = fits ? (const uint8_t **)xmalloc(n * sizeof *picks) : NULL;
    size_t *lens = fits ? (size_t *)xmalloc(n * sizeof *lens) : NULL;
    keyroute_status st;
    ST(keyroute_pool_new(&p), KEYROUTE_OK);
    ST(keyroute_pool_seed(p, ms.ptrs, ms.lens, ms.n, 0, 0, NULL), KEYROUTE_OK);
    st = keyroute_pool_pick_many(p, n, picks, lens, &count);
    if (ok && st == KEYROUTE_OK)
        CHECKD(count == (size_t)next_u64(c), id);
    if (st != KEYROUTE_OK)
        CHECKD(count == 99, id);
    free((void *)picks);
    free(lens);
    members_free(ms);
    ST(keyroute_pool_free(p), KEYROUTE_OK);
    return st;
}

static keyroute_status op_pool_key(cursor *c)
{
    size_t kl, len = 0;
    char *key = next_text(c, &kl);
    uint8_t buf[256];
    keyroute_status st = keyroute_side_key(B(key), kl, buf, sizeof buf, &len);
    free(key);
    return st;
}

static keyroute_status op_slot_map_add_master(cursor *c)
{
    keyroute_slot_map *m = NULL;
    char *host = next_text(c, NULL);
    long long port = next_i64(c);
    keyroute_status st;
    ST(keyroute_slot_map_new(&m), KEYROUTE_OK);
    st = keyroute_slot_map_add_master(m, "", host, port, NULL);
    if (st != KEYROUTE_OK)
        CHECK(keyroute_slot_map_len(m) == 0);
    free(host);
    ST(keyroute_slot_map_free(m), KEYROUTE_OK);
    return st;
}

static keyroute_status op_slot_map_assign(cursor *c)
{
    keyroute_slot_map *m = NULL;
    uint16_t start = (uint16_t)next_u64(c), end = (uint16_t)next_u64(c);
    keyroute_status st;
    ST(keyroute_slot_map_new(&m), KEYROUTE_OK);
    ST(keyroute_slot_map_add_master(m, "", "10.0.0.1", 7000, NULL), KEYROUTE_OK);
    st = keyroute_slot_map_assign(m, start, end, 0);
    ST(keyroute_slot_map_free(m), KEYROUTE_OK);
    return st;
}

static keyroute_status op_redirect(cursor *c, int ok, const char *id)
{
    size_t tl;
    char *text = next_text(c, &tl);
    keyroute_redirect r;
    keyroute_status st = keyroute_redirect_parse(B(text), tl, NULL, &r);
    if (ok && st == KEYROUTE_OK) {
        const char *kind = next_field(c);
        unsigned long long slot = next_u64(c);
        size_t hl;
        char *host = next_text(c, &hl);
        unsigned long long port = next_u64(c);
        CHECKD(r.moved == (strcmp(kind, "MOVED") == 0) && r.slot == slot && r.port == port &&
                   same(r.host, r.host_len, host, hl),
               id);
        free(host);
    }
    free(text);
    return st;
}

static keyroute_status op_plan(cursor *c, const char *id)
{
    keyroute_slot_map *m = NULL;
    keyroute_plan *p = NULL;
    size_t masters = (size_t)next_u64(c), i, j, nw;
    char **addrs = (char **)xmalloc((masters ? masters : 1) * sizeof *addrs);
    size_t *nodes;
    uint64_t *weights;
    keyroute_status st;

    ST(keyroute_slot_map_new(&m), KEYROUTE_OK);
    for (i = 0; i < masters; i++) {
        long long port;
        char *host;
        size_t ranges;
        addrs[i] = next_text(c, NULL);
        host = split_addr(addrs[i], &port);
        ST(keyroute_slot_map_add_master(m, "", host, port, NULL), KEYROUTE_OK);
        free(host);
        ranges = (size_t)next_u64(c);
        for (j = 0; j < ranges; j++) {
            uint16_t s = (uint16_t)next_u64(c), e = (uint16_t)next_u64(c);
            ST(keyroute_slot_map_assign(m, s, e, i), KEYROUTE_OK);
        }
    }
    nw = (size_t)next_u64(c);
    nodes = (size_t *)xmalloc((nw ? nw : 1) * sizeof *nodes);
    weights = (uint64_t *)xmalloc((nw ? nw : 1) * sizeof *weights);
    for (i = 0; i < nw; i++) {
        char *addr = next_text(c, NULL);
        nodes[i] = SIZE_MAX;
        for (j = 0; j < masters; j++)
            if (strcmp(addrs[j], addr) == 0)
                nodes[i] = j;
        CHECKD(nodes[i] != SIZE_MAX, id);
        weights[i] = next_u64(c);
        free(addr);
    }
    st = keyroute_plan_new(m, nodes, weights, nw, &p);
    ST(keyroute_plan_free(p), KEYROUTE_OK);
    ST(keyroute_slot_map_free(m), KEYROUTE_OK);
    for (i = 0; i < masters; i++)
        free(addrs[i]);
    free(addrs);
    free(nodes);
    free(weights);
    return st;
}

static void run_case(char **fields, size_t nf)
{
    cursor c;
    const char *id = fields[0], *op = fields[1], *want = fields[2];
    int ok = strcmp(want, "OK") == 0;
    keyroute_status st = KEYROUTE_INTERNAL;

    c.f = fields;
    c.n = nf;
    c.i = 3;
    c.bad = 0;
    if (strcmp(op, "parse_nodes") == 0)
        st = op_parse_nodes(&c, ok, id);
    else if (strcmp(op, "parse_weights") == 0)
        st = op_parse_weights(&c, ok, id);
    else if (strcmp(op, "ring") == 0)
        st = op_ring(&c, ok, id);
    else if (strcmp(op, "ring_change") == 0)
        st = op_ring_change(&c, id);
    else if (strcmp(op, "ring_get_n") == 0)
        st = op_ring_get_n(&c, ok, id);
    else if (strcmp(op, "diff") == 0)
        st = op_diff(&c, id);
    else if (strcmp(op, "pool_seed") == 0)
        st = op_pool_seed(&c, ok, id);
    else if (strcmp(op, "pool_restore") == 0)
        st = op_pool_restore(&c, ok, id);
    else if (strcmp(op, "pool_pick_many") == 0)
        st = op_pool_pick_many(&c, ok, id);
    else if (strcmp(op, "pool_key") == 0)
        st = op_pool_key(&c);
    else if (strcmp(op, "slot_map_add_master") == 0)
        st = op_slot_map_add_master(&c);
    else if (strcmp(op, "slot_map_assign") == 0)
        st = op_slot_map_assign(&c);
    else if (strcmp(op, "redirect") == 0)
        st = op_redirect(&c, ok, id);
    else if (strcmp(op, "plan") == 0)
        st = op_plan(&c, id);
    else {
        CHECKD(0, op); /* an op this runner does not know */
        return;
    }
    CHECKD(!c.bad && c.i == c.n, id); /* every field read, none missing */
    if (ok) {
        char detail[600];
        snprintf(detail, sizeof detail, "%s: got %s (%s)", id,
                 keyroute_status_name((int32_t)st), keyroute_last_error_message());
        CHECKD(st == KEYROUTE_OK, detail);
    } else {
        const char *colon = strchr(want, ':');
        size_t nl = colon ? (size_t)(colon - want) : strlen(want);
        long number = colon ? atol(colon + 1) : -1;
        const char *got = keyroute_status_name((int32_t)st);
        char detail[600];
        snprintf(detail, sizeof detail, "%s: want %s, got %d %s (%s)", id, want, (int)st, got,
                 keyroute_last_error_message());
        CHECKD((long)st == number && strlen(got) == nl && strncmp(got, want, nl) == 0, detail);
        /* An error says what happened. */
        CHECKD(keyroute_last_error_message()[0] != '\0', detail);
    }
    cases_run++;
}

int main(int argc, char **argv)
{
    FILE *f;
    char *line = NULL, *fields[512];
    size_t cap = 0, nf;
    long lines = 0;

    if (argc < 2) {
        fputs("usage: test_contract CONTRACT.txt (from contract_to_lines.py)\n", stderr);
        return 2;
    }
    f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    while (read_line(f, &line, &cap)) {
        nf = split(line, fields, sizeof fields / sizeof fields[0]);
        if (nf == 0)
            continue;
        lines++;
        if (nf < 3) {
            CHECKD(0, "a case line has an id, an op and a status");
            continue;
        }
        run_case(fields, nf);
    }
    free(line);
    fclose(f);
    printf("keyroute C contract (%s): %ld cases of %ld run, %ld checks, %ld failed\n",
           keyroute_version(), cases_run, lines, checks, failures);
    if (cases_run == 0 || cases_run != lines) {
        fputs("test_contract: not every case ran\n", stderr);
        return 1;
    }
    return failures ? 1 : 0;
}
