package dev.metakit.inbox.conformance;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The part of the test JVM's log file (log4j2-test.properties) written since a host started: the in-process hosts'
 * tests share one JVM and one file, and each reads only its own host's lines.
 */
public final class HostLog {
    private static final Path FILE = Path.of(System.getProperty("metakit.plain.log", "target/plain-camel-host.log"));

    private final long start;

    private HostLog(long start) {
        this.start = start;
    }

    /** From now on. */
    public static HostLog fromNow() throws IOException {
        return new HostLog(Files.exists(FILE) ? Files.size(FILE) : 0);
    }

    public String text() throws IOException {
        byte[] all = Files.readAllBytes(FILE);
        return new String(Arrays.copyOfRange(all, (int) Math.min(start, all.length), all.length), StandardCharsets.UTF_8);
    }
}
