package dev.metakit.inbox.support;

/** A child JVM's own word on which Java it is ({@link ChildJvmIT}). */
public final class JavaVersionProbe {
    private JavaVersionProbe() {
    }

    public static void main(String[] args) {
        System.out.println(System.getProperty("java.version"));
    }
}
