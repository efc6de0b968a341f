// A least-used pick from Java: the pool lives on Redis, every process picking through it
// shares the counts.
//
//   java -cp keyroute.jar:/usr/share/java/jna.jar:. PoolPick redis://127.0.0.1:6379/
import java.util.List;
import org.keyroute.LeastUsed;

public final class PoolPick {
    public static void main(String[] args) {
        String url = args.length > 0 ? args[0] : "redis://127.0.0.1:6379/";
        try (LeastUsed pool = LeastUsed.open(url, "{example}:proxies")) {
            pool.seed(List.of("proxy-a", "proxy-b", "proxy-c"), 0);
            for (int i = 0; i < 4; i++) {
                System.out.println("pick: " + pool.pick().orElse("(pool empty)"));
            }
        }
    }
}
