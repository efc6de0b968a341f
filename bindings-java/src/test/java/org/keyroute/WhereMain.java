package org.keyroute;

/** Prints where libkeyroute was loaded from and one lookup ({@link LoaderTest}). */
public final class WhereMain {
    private WhereMain() {}

    public static void main(String[] args) {
        try (Ring r = new Ring("libketama", java.util.List.of("a:1", "b:2"))) {
            System.out.println("FROM " + Keyroute.nativeLibrary());
            System.out.println("GET " + r.get("k"));
        }
    }
}
