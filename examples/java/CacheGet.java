// A smart-cache get from Java: the loader runs in one caller across every process sharing
// the Redis; the others wait for its value. A loader that throws is a BackendException.
//
//   java -cp keyroute.jar:/usr/share/java/jna.jar:. CacheGet redis://127.0.0.1:6379/
import java.nio.charset.StandardCharsets;
import org.keyroute.BackendException;
import org.keyroute.SmartCache;

public final class CacheGet {
    public static void main(String[] args) {
        String url = args.length > 0 ? args[0] : "redis://127.0.0.1:6379/";
        try (SmartCache cache = SmartCache.open(url)) {
            String client = "client-" + ProcessHandle.current().pid();
            byte[] v = cache.getOrLoad(client, "profile",
                    () -> "{\"name\":\"Ada\"}".getBytes(StandardCharsets.UTF_8));
            System.out.println("profile: " + new String(v, StandardCharsets.UTF_8));
            try {
                cache.getOrLoad(client, "orders", () -> {
                    throw new IllegalStateException("orders service down");
                });
            } catch (BackendException e) {
                System.out.println("orders: " + e.code() + " " + e.backendCode() + ": " + e.backendMessage());
            }
        }
    }
}
