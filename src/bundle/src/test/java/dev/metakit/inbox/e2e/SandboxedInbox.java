package dev.metakit.inbox.e2e;

import dev.metakit.inbox.ingest.WebhookVerification;
import dev.metakit.inbox.sandbox.Convergence;
import dev.metakit.inbox.sandbox.Delivery;
import dev.metakit.inbox.sandbox.DeliveryLog;
import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxSettings;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;

import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The real bundle wired to an in-test sandbox the way the default run wires them: the sandbox's API is
 * {@code metakit.api.url}, its key the API key, its secret the webhook secret, its accounts {@code metakit.accounts},
 * and a rotation updates the consumer's secrets. The test database is emptied first.
 */
final class SandboxedInbox implements AutoCloseable {
    final Sandbox sandbox;
    final RunningInbox inbox;

    private SandboxedInbox(Sandbox sandbox, RunningInbox inbox) {
        this.sandbox = sandbox;
        this.inbox = inbox;
    }

    /** {@code settings} without the webhook URL and secret, which this fills in. */
    static SandboxedInbox start(SandboxSettings.Builder settings, Map<String, String> overrides) throws IOException {
        TestDatabase.truncateAll();
        int httpPort = RunningInbox.freePort();
        Sandbox sandbox = new Sandbox(settings.webhookUrl("http://127.0.0.1:" + httpPort + "/hooks/metakit")
                .webhookSecret(RunningInbox.SECRET).build());
        try {
            Map<String, String> p = new HashMap<>(Map.of(
                    "camel.server.port", String.valueOf(httpPort),
                    "metakit.api.url", sandbox.apiBaseUrl().toString(),
                    "metakit.api.key", sandbox.apiKey(),
                    "metakit.accounts", LongStream.rangeClosed(1, sandbox.settings().accounts())
                            .mapToObj(Long::toString).collect(Collectors.joining(",")),
                    "metakit.worker.poll-interval-millis", "200",
                    "metakit.worker.backoff-base-millis", "100",
                    "metakit.worker.backoff-max-millis", "1000",
                    "metakit.reconcile.interval", "2s",
                    "metakit.status.interval", "1s"));
            p.putAll(overrides);
            RunningInbox inbox = RunningInbox.start(p);
            WebhookVerification verification = inbox.camelContext().getRegistry()
                    .lookupByNameAndType("webhookVerification", WebhookVerification.class);
            sandbox.onRotation(r -> verification.secrets(r.secret(), r.previousSecret()));
            return new SandboxedInbox(sandbox, inbox);
        } catch (RuntimeException e) {
            sandbox.close();
            throw e;
        }
    }

    /** Stops the traffic, waits for every delivery to settle, then for the table to match the truth. */
    Convergence.Report quiesceAndAwaitConvergence(Duration timeout) throws Exception {
        assertThat(sandbox.quiesce(Duration.ofSeconds(30))).as("sandbox deliveries settle").isTrue();
        AtomicReference<Convergence.Report> last = new AtomicReference<>();
        await().atMost(timeout).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            Convergence.Report report = Convergence.check(sandbox.truth(), TestDatabase.dataSource());
            last.set(report);
            assertThat(report.differences()).as("positions that differ from the sandbox's truth").isEmpty();
        });
        return last.get();
    }

    /** Every row processed, every acknowledged delivery stored, no row the sandbox never sent. */
    void assertInboxMatchesDeliveries() throws Exception {
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                .until(() -> TestDatabase.scalar("select count(*) from webhook_inbox where processed_at is null") == 0);
        assertThat(TestDatabase.scalar("select count(*) from webhook_inbox where failed_at is not null")).isZero();
        Set<String> stored = inboxKeys();
        DeliveryLog log = sandbox.deliveries();
        for (Delivery d : log.acknowledged()) {
            assertThat(d.keys()).as("an inbox row for acknowledged %s", d.event().event())
                    .anyMatch(stored::contains);
        }
        assertThat(log.sentKeys()).containsAll(stored);
    }

    static Set<String> inboxKeys() throws SQLException {
        Set<String> keys = new HashSet<>();
        try (Connection c = TestDatabase.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select delivery_key from webhook_inbox")) {
            while (rs.next()) {
                keys.add(rs.getString(1));
            }
        }
        return keys;
    }


    static long timedOutAttempts(List<dev.metakit.inbox.sandbox.DeliveryAttempt> attempts) {
        return attempts.stream().filter(a -> a.error() != null && a.error().contains("Timeout")).count();
    }

    @Override
    public void close() {
        try {
            sandbox.close();
        } finally {
            inbox.close();
        }
    }
}
