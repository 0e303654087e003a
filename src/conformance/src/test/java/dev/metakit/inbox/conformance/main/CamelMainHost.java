package dev.metakit.inbox.conformance.main;

import dev.metakit.inbox.conformance.HostLog;
import org.apache.camel.main.Main;

import java.io.IOException;
import java.util.Properties;

/**
 * A camel-main host written from docs/camel-main.md: its own Main and application.properties
 * (camel-main-host/application.properties: the host's keys, the bundle's route files and RouteBuilder, no metakit.*
 * default), camel-platform-http-main as its HTTP server, the bundle's settings as the host would give them. The
 * bundle's defaults come from its jar.
 */
final class CamelMainHost {
    final Main main = new Main();
    final int port;
    private final HostLog log;

    private CamelMainHost(int port, HostLog log) {
        this.port = port;
        this.log = log;
    }

    /** A started host serving on {@code port}, with {@code settings} over its application.properties. */
    static CamelMainHost start(int port, Properties settings) throws Exception {
        CamelMainHost host = new CamelMainHost(port, HostLog.fromNow());
        Properties overrides = new Properties();
        overrides.putAll(settings);
        overrides.put("camel.server.port", String.valueOf(host.port));
        host.main.setPropertyPlaceholderLocations("classpath:camel-main-host/application.properties");
        host.main.setOverrideProperties(overrides);
        host.main.start();
        return host;
    }

    /** This host's part of the test JVM's log. */
    String log() throws IOException {
        return log.text();
    }
}
