package org.keyroute;

import java.util.HashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One client per node, chosen by a {@link Ring} or a {@link Router} (any engine, such as
 * {@code java-hashcode}, the reference Java client's ring): {@code forKey(key)} is the client of the
 * node owning the key. It depends on no Redis client: {@code C} is a Jedis, a Lettuce
 * connection, a memcached client or anything else.
 *
 * <pre>{@code
 * Map<String, Jedis> conns = Map.of("redis-1:6379", new Jedis("redis-1", 6379), ...);
 * Sharded<Jedis> redis = Sharded.of("java-hashcode", conns);
 * redis.forKey("user:42").get("user:42");
 * }</pre>
 *
 * <p><b>Thread safety:</b> as safe as the ring ({@code forKey} from any thread); the
 * clients' own thread safety is theirs.
 *
 * @param <C> the client type
 */
public final class Sharded<C> implements AutoCloseable {
    private final Ring ring;
    private final Router router;
    private final Map<String, C> clients;

    /** Over {@code ring}, whose every node must have a client in {@code clients}. */
    public Sharded(Ring ring, Map<String, C> clients) {
        this(Objects.requireNonNull(ring, "ring"), null, clients, ring.nodes());
    }

    /** Over {@code router}, whose every node must have a client in {@code clients}. */
    public Sharded(Router router, Map<String, C> clients) {
        this(null, Objects.requireNonNull(router, "router"), clients, router.nodes());
    }

    private Sharded(Ring ring, Router router, Map<String, C> clients, List<String> nodes) {
        this.ring = ring;
        this.router = router;
        this.clients = new ConcurrentHashMap<>(Objects.requireNonNull(clients, "clients"));
        for (String node : nodes) {
            if (!this.clients.containsKey(node)) {
                throw KeyrouteException.of(ErrorCode.UNKNOWN_NODE, "the ring's node " + node
                        + " has no client");
            }
        }
    }

    /**
     * Over a new router of {@code engine} (a ring profile or any other engine) whose nodes
     * are the keys of {@code clients}, in their iteration order (use a
     * {@link java.util.LinkedHashMap} when the engine depends on the order, as
     * {@code guava-jump} does).
     */
    public static <C> Sharded<C> of(String engine, Map<String, C> clients) {
        return new Sharded<>(Router.build(engine, List.copyOf(clients.keySet())), clients);
    }

    /** The client of the node owning {@code key} ({@link NodeNotFoundException} when the
     *  ring is empty). */
    public C forKey(String key) {
        return clientOf(ring != null ? ring.get(key) : router.get(key));
    }

    /** The client of the node owning {@code key}. */
    public C forKey(byte[] key) {
        return clientOf(ring != null ? ring.get(key) : router.get(key));
    }

    private C clientOf(String node) {
        if (node == null) {
            throw KeyrouteException.of(ErrorCode.UNKNOWN_NODE, "the ring has no node");
        }
        C c = clients.get(node);
        if (c == null) {
            throw KeyrouteException.of(ErrorCode.UNKNOWN_NODE, "the ring's node " + node
                    + " has no client");
        }
        return c;
    }

    /** The node owning {@code key}, or null when the ring is empty. */
    public String nodeFor(String key) {
        return ring != null ? ring.get(key) : router.get(key);
    }

    /**
     * Adds {@code node} (weight 1) with its client: only the keys the engine moves to it
     * change owner ({@code java-hashcode}: in place, as the reference's skip list).
     */
    public void add(String node, C client) {
        Objects.requireNonNull(client, "client");
        if (clients.putIfAbsent(Objects.requireNonNull(node, "node"), client) != null) {
            throw KeyrouteException.of(ErrorCode.DUPLICATE_NODE, "node " + node + " is already there");
        }
        try {
            if (ring != null) {
                ring.add(node);
            } else {
                router.add(node);
            }
        } catch (RuntimeException e) {
            clients.remove(node);
            throw e;
        }
    }

    /** Removes {@code node}; returns its client (to close: it is the caller's). */
    public C remove(String node) {
        if (ring != null) {
            ring.remove(node);
        } else {
            router.remove(node);
        }
        return clients.remove(node);
    }

    /** Every client, by node. */
    public Map<String, C> clients() {
        return new HashMap<>(clients);
    }

    /** Closes the ring or router (not the clients: they are the caller's). */
    @Override
    public void close() {
        if (ring != null) {
            ring.close();
        } else {
            router.close();
        }
    }
}
