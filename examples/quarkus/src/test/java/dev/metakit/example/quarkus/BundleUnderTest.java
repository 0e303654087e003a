package dev.metakit.example.quarkus;

import dev.metakit.inbox.conformance.RuntimeParts;
import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxSettings;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * A real PostgreSQL (embedded) as the application's datasource and the bundle's MetaKit sandbox, and the host's settings
 * that point at them.
 */
public class BundleUnderTest implements QuarkusTestResourceLifecycleManager {
    static final String SECRET = "whsec_quarkus_host_test";
    static final int PORT = RuntimeParts.freePort();
    static EmbeddedPostgres postgres;
    static Sandbox sandbox;

    @Override
    public Map<String, String> start() {
        try {
            postgres = EmbeddedPostgres.builder().start();
            sandbox = new Sandbox(SandboxSettings.builder()
                    .webhookUrl("http://127.0.0.1:" + PORT + "/hooks/metakit")
                    .webhookSecret(SECRET)
                    .accounts(2)
                    .faults(SandboxFaults.none())
                    .operations(40)
                    .apiPort(0)
                    .build());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Map.of(
                "quarkus.http.test-port", String.valueOf(PORT),
                "quarkus.http.host", "127.0.0.1",
                "metakit.webhook.secret", SECRET,
                "quarkus.datasource.jdbc.url", postgres.getJdbcUrl("postgres", "postgres"),
                "quarkus.datasource.username", "postgres",
                "metakit.api.url", sandbox.apiBaseUrl().toString(),
                "metakit.api.key", sandbox.apiKey(),
                "metakit.accounts", "1,2");
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
}
