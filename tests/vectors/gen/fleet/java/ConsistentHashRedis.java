// The reference Java ring of issue 38, as the issue describes it: a sharded Redis client
// whose ring puts 150 virtual nodes per server, named `server + "-N" + i`, into a
// ConcurrentSkipListMap<Integer, String> at Math.abs(vnode.hashCode()) (a later put
// overwrites a shared point), removes a server by removing the points its vnodes hash to,
// and maps a key to tailMap(Math.abs(key.hashCode())), else the first entry, then to a
// server with vnode.split("-")[0].
//
// keyroute's code, written from that description for tests/vectors/gen/fleet/
// gen_java_reference.py (there is no published class to run); `Jedis` is a stub holding
// only its host. `vnodeFor` and `size` are added for the recorder: the vnode a lookup
// lands on (whose server, before the split, is keyroute's default answer) and the map's
// size. Nothing else differs from the ring described.
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/** A stub: the ring only creates and closes shards. */
class Jedis {
    final String host;

    Jedis(String host) {
        this.host = host;
    }

    void close() {
    }
}

public class ConsistentHashRedis {
    private static final int VIRTUAL_NODES = 150;

    private final ConcurrentSkipListMap<Integer, String> ring = new ConcurrentSkipListMap<>();
    private final Map<String, Jedis> shards = new ConcurrentHashMap<>();

    public ConsistentHashRedis(List<String> servers) {
        for (String server : servers) {
            addServer(server);
        }
    }

    public void addServer(String server) {
        shards.put(server, new Jedis(server));
        for (int i = 0; i < VIRTUAL_NODES; i++) {
            String vnode = server + "-N" + i;
            ring.put(hash(vnode), vnode);
        }
    }

    public void removeServer(String server) {
        for (int i = 0; i < VIRTUAL_NODES; i++) {
            ring.remove(hash(server + "-N" + i));
        }
        Jedis shard = shards.remove(server);
        if (shard != null) {
            shard.close();
        }
    }

    /** The server of `key`: the part of its vnode's name before the first '-'. */
    public String getServer(String key) {
        return vnodeFor(key).split("-")[0];
    }

    String vnodeFor(String key) {
        SortedMap<Integer, String> tail = ring.tailMap(hash(key));
        Integer point = tail.isEmpty() ? ring.firstKey() : tail.firstKey();
        return ring.get(point);
    }

    int size() {
        return ring.size();
    }

    private static int hash(String s) {
        return Math.abs(s.hashCode());
    }
}
