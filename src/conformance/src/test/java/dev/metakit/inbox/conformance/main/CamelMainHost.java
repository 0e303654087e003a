package dev.metakit.inbox.conformance.main;

import org.apache.camel.main.Main;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Properties;

/**
 * A camel-main host written from docs/camel-main.md: its own Main and application.properties
 * (camel-main-host/application.properties: the host's keys, the bundle's route files and RouteBuilder, no metakit.*
 * default), camel-platform-http-main as its HTTP server, the bundle's settings as the host would give them. The
 * bundle's defaults come from its jar.
 */
final class CamelMainHost {
    private static final Path LOG = Path.of(System.getProperty("metakit.plain.log", "target/plain-camel-host.log"));

    final Main main = new Main();
    final int port;
    private final long logStart;

    private CamelMainHost(int port, long logStart) {
        this.port = port;
        this.logStart = logStart;
    }

    /** A started host serving on {@code port}, with {@code settings} over its application.properties. */
    static CamelMainHost start(int port, Properties settings) throws Exception {
        CamelMainHost host = new CamelMainHost(port, Files.exists(LOG) ? Files.size(LOG) : 0);
        Properties overrides = new Properties();
        overrides.putAll(settings);
        overrides.put("camel.server.port", String.valueOf(host.port));
        host.main.setPropertyPlaceholderLocations("classpath:camel-main-host/application.properties");
        host.main.setOverrideProperties(overrides);
        host.main.start();
        return host;
    }

    /** This host's part of the test JVM's log (a host tested before it in the same JVM wrote the rest). */
    String log() throws IOException {
        byte[] all = Files.readAllBytes(LOG);
        return new String(Arrays.copyOfRange(all, (int) Math.min(logStart, all.length), all.length),
                StandardCharsets.UTF_8);
    }
}
