package dev.metakit.example.quarkus;

import dev.metakit.inbox.conformance.GivenSecrets;
import dev.metakit.inbox.conformance.RestartablePostgres;
import dev.metakit.inbox.sandbox.Sandbox;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
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
    static final int PORT = freePort();
    static final Path LOG = Path.of("target", "quarkus-conformance-" + ProcessHandle.current().pid() + ".log");
    static RestartablePostgres postgres;
    static Sandbox sandbox;

    static URI webhook() {
        return URI.create("http://127.0.0.1:" + PORT + "/hooks/metakit");
    }

    @Override
    public Map<String, String> start() {
        postgres = new RestartablePostgres();
        try {
            sandbox = SECRETS.metakit(webhook());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> settings = new HashMap<>();
        settings.put("quarkus.http.test-port", String.valueOf(PORT));
        settings.put("quarkus.http.host", "127.0.0.1");
        settings.put("quarkus.log.file.enabled", "true");
        settings.put("quarkus.log.file.path", LOG.toString());
        settings.put("metakit.webhook.secret", SECRETS.webhookSecret());
        settings.put("metakit.webhook.secret-previous", SECRETS.previousSecret());
        settings.put("metakit.api.url", sandbox.apiBaseUrl().toString());
        settings.put("metakit.api.key", SECRETS.apiKey());
        settings.put("metakit.ops.token", SECRETS.opsToken());
        settings.put("metakit.accounts", "1");
        settings.put("metakit.database.url", postgres.jdbcUrl());
        settings.put("metakit.database.user", RestartablePostgres.USER);
        settings.put("metakit.database.password", SECRETS.databasePassword());
        settings.put("quarkus.datasource.jdbc.url", postgres.jdbcUrl());
        settings.put("quarkus.datasource.username", RestartablePostgres.USER);
        settings.put("quarkus.datasource.password", SECRETS.databasePassword());
        return settings;
    }

    @Override
    public void stop() {
        try {
            if (sandbox != null) {
                sandbox.close();
            }
            if (postgres != null) {
                postgres.close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
