/*
 * Runs the real libmemcached (Debian libmemcached-dev) continuum for
 * gen_libmemcached.py.  No server is contacted: building the ketama continuum
 * and memcached_generate_hash() only hash strings.
 *
 * stdin:  line 1: N (number of servers)
 *         N lines: "<host> <port> <weight>"
 *         then one key per line, hex-encoded bytes (an empty line = empty key)
 * stdout: "version <memcached_lib_version()>"
 *         "points <ketama.continuum_points_counter>"
 *         one line per key: "<host>:<port>" of the server memcached_generate_hash()
 *         returned (the index is mapped back through the library itself).
 * With the argument --points it also prints "point <value> <server index>" for
 * every continuum entry (debugging aid: this reads libmemcached's private
 * continuum item layout {uint32_t index; uint32_t value;} from continuum.hpp).
 *
 * Setup: MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED=1 (this also selects MD5 for the key
 * hash and the distribution hash), then MEMCACHED_BEHAVIOR_HASH=MD5 explicitly,
 * servers added with memcached_server_add_with_weight in the given order.
 */
#include <libmemcached/memcached.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* private layout, src/libmemcached/continuum.hpp in libmemcached 1.x */
struct memcached_continuum_item_st {
  uint32_t index;
  uint32_t value;
};

int main(int argc, char **argv) {
  int dump_points = argc > 1 && strcmp(argv[1], "--points") == 0;
  static char line[65536];
  static char key[32768];
  memcached_st *memc = memcached_create(NULL);
  if (!memc) { fprintf(stderr, "memcached_create failed\n"); return 1; }

  if (memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1) != MEMCACHED_SUCCESS ||
      memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_HASH, MEMCACHED_HASH_MD5) != MEMCACHED_SUCCESS) {
    fprintf(stderr, "behavior_set failed\n");
    return 1;
  }

  if (!fgets(line, sizeof line, stdin)) return 1;
  int n = atoi(line);
  for (int i = 0; i < n; i++) {
    char host[1024];
    unsigned port, weight;
    if (!fgets(line, sizeof line, stdin) || sscanf(line, "%1023s %u %u", host, &port, &weight) != 3) {
      fprintf(stderr, "bad server line %d\n", i);
      return 1;
    }
    memcached_return_t rc = memcached_server_add_with_weight(memc, host, (in_port_t) port, weight);
    if (rc != MEMCACHED_SUCCESS) {
      fprintf(stderr, "server_add %s:%u failed: %s\n", host, port, memcached_strerror(memc, rc));
      return 1;
    }
  }
  if (memcached_server_count(memc) != (uint32_t) n) { fprintf(stderr, "server count\n"); return 1; }
  if (memcached_behavior_get(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION) != MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED &&
      memcached_behavior_get(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION) != MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA) {
    fprintf(stderr, "unexpected distribution\n");
    return 1;
  }

  printf("version %s\n", memcached_lib_version());
  printf("distribution %u\n", (unsigned) memcached_behavior_get(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION));
  printf("points %u\n", memc->ketama.continuum_points_counter);
  if (dump_points) {
    for (uint32_t i = 0; i < memc->ketama.continuum_points_counter; i++) {
      printf("point %u %u\n", memc->ketama.continuum[i].value, memc->ketama.continuum[i].index);
    }
  }

  while (fgets(line, sizeof line, stdin)) {
    size_t len = strcspn(line, "\r\n");
    if (len % 2 || len / 2 >= sizeof key) { fprintf(stderr, "bad key line\n"); return 1; }
    for (size_t i = 0; i < len / 2; i++) {
      int hi = hexval(line[2 * i]), lo = hexval(line[2 * i + 1]);
      if (hi < 0 || lo < 0) { fprintf(stderr, "bad hex\n"); return 1; }
      key[i] = (char) (hi << 4 | lo);
    }
    uint32_t idx = memcached_generate_hash(memc, key, len / 2);
    const memcached_instance_st *inst = memcached_server_instance_by_position(memc, idx);
    if (!inst) { fprintf(stderr, "no instance for index %u\n", idx); return 1; }
    printf("%s:%u\n", memcached_server_name(inst), (unsigned) memcached_server_port(inst));
  }
  memcached_free(memc);
  return 0;
}
