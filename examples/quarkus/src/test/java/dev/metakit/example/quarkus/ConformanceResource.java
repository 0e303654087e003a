package dev.metakit.example.quarkus;

import dev.metakit.inbox.conformance.GivenSecrets;
import dev.metakit.inbox.conformance.RestartablePostgres;
import dev.metakit.inbox.conformance.RuntimeParts;
import dev.metakit.inbox.sandbox.Sandbox;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * What {@link QuarkusConformanceTest} runs the host on: a PostgreSQL it can stop and start again, the sandbox's
 * MetaKit API, distinctive secrets, and Quarkus's log in a file. The database is given both as the bundle's own
 * settings and as the application's default datasource, so the checks hold whichever one the host uses.
 */
public class ConformanceResource implements QuarkusTestResourceLifecycleManager {
    static final GivenSecrets SECRETS = GivenSecrets.random();
    static final int PORT = RuntimeParts.freePort();
    static final Path LOG = Path.of("target", "quarkus-conformance-" + ProcessHandle.current().pid() + ".log");
    static Sandbox sandbox;
    static RuntimeParts parts;

    @Override
    public Map<String, String> start() {
        parts = RuntimeParts.start(SECRETS, PORT);
        sandbox = parts.sandbox();
        Map<String, String> settings = new HashMap<>(parts.settings());
        settings.put("quarkus.http.test-port", String.valueOf(PORT));
        settings.put("quarkus.http.host", "127.0.0.1");
        settings.put("quarkus.log.file.enabled", "true");
        settings.put("quarkus.log.file.path", LOG.toString());
        settings.put("quarkus.datasource.jdbc.url", parts.postgres().jdbcUrl());
        settings.put("quarkus.datasource.username", RestartablePostgres.USER);
        settings.put("quarkus.datasource.password", SECRETS.databasePassword());
        return settings;
    }

    @Override
    public void stop() {
        if (parts != null) {
            try {
                parts.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
