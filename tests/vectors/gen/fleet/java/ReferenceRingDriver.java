// Runs ConsistentHashRedis (the reference ring of issue 38) for
// tests/vectors/gen/fleet/gen_java_reference.py. Protocol: stdin lines of space-separated
// fields, strings as UTF-8 hex ("-" = empty):
//   new NODE...    a new ring, its constructor given these servers (maybe none)
//   add NODE       addServer
//   remove NODE    removeServer
//   size           prints the map's size
//   get KEY...     prints per key "SERVER NODE": getServer(key), and the server of the
//                  vnode the lookup lands on (the vnode's name without its "-N<i>")
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

public class ReferenceRingDriver {
    public static void main(String[] argv) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, "UTF-8");
        ConsistentHashRedis ring = null;
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] f = line.split(" ");
            switch (f[0]) {
                case "new": {
                    List<String> servers = new ArrayList<>();
                    for (int i = 1; i < f.length; i++) servers.add(Hex.unhex(f[i]));
                    ring = new ConsistentHashRedis(servers);
                    break;
                }
                case "add": ring.addServer(Hex.unhex(f[1])); break;
                case "remove": ring.removeServer(Hex.unhex(f[1])); break;
                case "size": out.println(ring.size()); break;
                case "get":
                    for (int i = 1; i < f.length; i++) {
                        String key = Hex.unhex(f[i]);
                        String vnode = ring.vnodeFor(key);
                        out.println(Hex.hex(ring.getServer(key)) + " " + Hex.hex(vnode.substring(0, vnode.lastIndexOf("-N"))));
                    }
                    break;
                default: throw new IllegalArgumentException(f[0]);
            }
        }
        out.flush();
    }
}
