package dev.metakit.inbox.conformance;

import dev.metakit.inbox.sandbox.Sandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What a runtime under test runs on, set up once for every runtime's checks: a PostgreSQL they can stop and start
 * again, the sandbox's MetaKit API (its own traffic never starts), the given secrets, and the port of the runtime's
 * webhook; {@link #settings()} are the bundle's settings that point the runtime at them.
 */
public record RuntimeParts(GivenSecrets secrets, int port, RestartablePostgres postgres, Sandbox sandbox)
        implements AutoCloseable {

    /** The parts of a runtime whose webhook listens on {@code port}. */
    public static RuntimeParts start(GivenSecrets secrets, int port) {
        RestartablePostgres postgres = new RestartablePostgres();
        try {
            return new RuntimeParts(secrets, port, postgres, secrets.metakit(webhook(port)));
        } catch (IOException e) {
            try {
                postgres.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new UncheckedIOException(e);
        }
    }

    /** The parts of a runtime on a free port. */
    public static RuntimeParts start(GivenSecrets secrets) {
        return start(secrets, freePort());
    }

    /** The bundle's settings: the secrets, the sandbox's API and its one account, the database. */
    public Map<String, String> settings() {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("metakit.webhook.secret", secrets.webhookSecret());
        settings.put("metakit.webhook.secret-previous", secrets.previousSecret());
        settings.put("metakit.api.url", sandbox.apiBaseUrl().toString());
        settings.put("metakit.api.key", secrets.apiKey());
        settings.put("metakit.ops.token", secrets.opsToken());
        settings.put("metakit.accounts", "1");
        settings.put("metakit.database.url", postgres.jdbcUrl());
        settings.put("metakit.database.user", RestartablePostgres.USER);
        settings.put("metakit.database.password", secrets.databasePassword());
        return settings;
    }

    /** The runtime's webhook URL, where the sandbox would deliver. */
    public URI webhook() {
        return webhook(port);
    }

    private static URI webhook(int port) {
        return URI.create("http://127.0.0.1:" + port + "/hooks/metakit");
    }

    /**
     * A port free now, for a runtime's server or its database, drawn at random from 10000-19999: below the kernel's
     * ephemeral range (32768-60999 on Linux) and the block the tests' own servers draw from ({@code TestPorts}, 20000
     * on). A port of {@code new ServerSocket(0)}, once let go, may be handed to the next server that binds port 0
     * before the runtime binds it (a sandbox's API was, and the runtime's webhook then answered as that API).
     */
    public static int freePort() {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = 10_000 + ThreadLocalRandom.current().nextInt(10_000);
            try (ServerSocket probe = new ServerSocket()) {
                probe.bind(new InetSocketAddress(port));
                return port;
            } catch (IOException taken) {
                // the next draw
            }
        }
        throw new IllegalStateException("no free port between 10000 and 19999 for the runtime under test");
    }

    @Override
    public void close() throws IOException {
        try {
            sandbox.close();
        } finally {
            postgres.close();
        }
    }
}
