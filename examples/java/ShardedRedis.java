// The reference Java service's ConsistentHashRedis (tests/vectors/gen/fleet/java/
// ConsistentHashRedis.java: 150 vnodes per server over String.hashCode in a skip list)
// over org.keyroute.Sharded: the same owner for every key, add and remove included.
// `Jedis` here is a stand-in holding its host; with the real one, import
// redis.clients.jedis.Jedis and nothing else changes.
//
//   java -cp keyroute.jar:/usr/share/java/jna.jar:. ShardedRedis
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.keyroute.Router;
import org.keyroute.Sharded;

public final class ShardedRedis {
    public static final class ConsistentHashRedis implements AutoCloseable {
        private final Sharded<Jedis> shards;

        public ConsistentHashRedis(List<String> servers) {
            Map<String, Jedis> conns = new ConcurrentHashMap<>();
            servers.forEach(s -> conns.put(s, new Jedis(s)));
            // node=prefix: the owner is the vnode's name before its first '-', as the
            // reference's split("-")[0]; drop it to get the server's own name.
            shards = new Sharded<>(Router.build("java-hashcode", servers, null, Map.of("node", "name")), conns);
        }
        public void addServer(String server) { shards.add(server, new Jedis(server)); }
        public void removeServer(String server) { shards.remove(server).close(); }
        public Jedis shardFor(String key) { return shards.forKey(key); }
        @Override public void close() { shards.close(); }
    }

    /** A stand-in for redis.clients.jedis.Jedis. */
    public static final class Jedis {
        final String host;
        Jedis(String host) { this.host = host; }
        void close() { }
    }

    public static void main(String[] args) {
        try (ConsistentHashRedis redis = new ConsistentHashRedis(List.of("redis-a:6379", "redis-b:6379", "cache3:6379"))) {
            for (String key : List.of("user:1", "user:2", "session:42")) {
                System.out.println(key + " -> " + redis.shardFor(key).host);
            }
            redis.addServer("redis-d:6379");
            redis.removeServer("redis-b:6379");
            System.out.println("after add redis-d, remove redis-b: user:1 -> " + redis.shardFor("user:1").host);
        }
    }
}
