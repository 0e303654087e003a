package dev.metakit.inbox.secret;

import dev.metakit.inbox.db.InboxMigrations;
import dev.metakit.inbox.ingest.WebhookVerification;
import dev.metakit.inbox.sandbox.DeliverySchedule;
import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxSettings;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestEvents;
import dev.metakit.inbox.support.TestSignatures;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import javax.sql.DataSource;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

/**
 * A sandbox MetaKit (one webhook, {@code wh_1}, signing with {@link RunningInbox#SECRET}) and instances of the bundle
 * on the test database that read the stored secret: METAKIT_WEBHOOK_SECRET unset, METAKIT_WEBHOOK_SECRET_KEY set, the
 * secret stored once (as {@code InboxCommand store-secret} does). The sandbox's webhook URL is {@code webhookUrl}: a
 * test with several instances puts a proxy there.
 */
public final class RotationRig implements AutoCloseable {
    static final String OPS_TOKEN = "ops-token-rotation-0123456789";
    public final String key = SecretCipherTest.newKey();
    public final Sandbox sandbox;
    final List<RunningInbox> instances = new ArrayList<>();
    private final Supplier<DataSource> database;
    private final Map<RunningInbox, Integer> ports = new java.util.concurrent.ConcurrentHashMap<>();
    private final HttpClient http = HttpClient.newHttpClient();
    private static final AtomicLong TICKETS = new AtomicLong(1000);

    /** @param window how long the sandbox signs with (and accepts) the previous secret after a rotation */
    public RotationRig(String webhookUrl, Duration window, int operations) throws IOException {
        this(webhookUrl, window, operations, TestDatabase::dataSource);
        TestDatabase.truncateAll();
    }

    /** On a database of the test's own ({@code database}: its current DataSource, the server may restart). */
    RotationRig(String webhookUrl, Duration window, int operations, Supplier<DataSource> database) throws IOException {
        this.database = database;
        InboxMigrations.migrate(database.get());
        // no automatic rotation (after 0 events = never): the bundle asks for it
        SandboxFaults faults = SandboxFaults.none().withRotation(0, window);
        sandbox = new Sandbox(SandboxSettings.builder().seed(32).accounts(3).faults(faults)
                .deliverySchedule(DeliverySchedule.contract().scaled(0.05).withRequestTimeout(Duration.ofSeconds(5)))
                .operations(operations).operationsPerSecond(40)
                .webhookUrl(webhookUrl).webhookSecret(RunningInbox.SECRET).build());
    }

    /** Stores the sandbox's secret as generation 1, under {@link #key}. */
    public void storeFirstSecret() throws Exception {
        assertStored(rotator(key, "wh_1").storeFirst(RunningInbox.SECRET));
    }

    private static void assertStored(boolean stored) {
        if (!stored) {
            throw new IllegalStateException("a secret was stored already");
        }
    }

    SecretRotator rotator(String withKey, String webhookId) {
        return new SecretRotator(store(), SecretCipher.fromSetting(withKey),
                new MetaKitRotationClient(sandbox.apiBaseUrl().toString(), sandbox.apiKey(), Duration.ofSeconds(2),
                        Duration.ofSeconds(10)), webhookId, Duration.ofSeconds(300), "test", Clock.systemUTC());
    }

    /** The settings of an instance that reads the stored secret, on {@code httpPort}, with the ops API on. */
    public Map<String, String> settings(int httpPort) {
        Map<String, String> p = new HashMap<>();
        p.put("camel.server.port", String.valueOf(httpPort));
        p.put("metakit.webhook.secret", "");
        p.put("metakit.webhook.secret-key", key);
        p.put("metakit.api.url", sandbox.apiBaseUrl().toString());
        p.put("metakit.api.key", sandbox.apiKey());
        p.put("metakit.accounts", LongStream.rangeClosed(1, sandbox.settings().accounts()).mapToObj(Long::toString)
                .collect(Collectors.joining(",")));
        p.put("metakit.worker.poll-interval-millis", "200");
        p.put("metakit.reconcile.interval", "PT1H");
        p.put("metakit.status.interval", "PT1H");
        p.put("metakit.ops.enabled", "true");
        p.put("metakit.ops.token", OPS_TOKEN);
        return p;
    }

    public RunningInbox start(Map<String, String> settings) {
        RunningInbox inbox = RunningInbox.start(settings);
        instances.add(inbox);
        ports.put(inbox, Integer.parseInt(settings.get("camel.server.port")));
        return inbox;
    }

    HttpResponse<String> ops(RunningInbox inbox, String method, String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(inbox.managementUri("/ops/api" + path))
                .header("Authorization", "Bearer " + OPS_TOKEN)
                .method(method, HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The status of a webhook.test delivery signed with these secrets only, posted to {@code inbox}. */
    public int postSignedWith(RunningInbox inbox, String... secrets) throws IOException, InterruptedException {
        byte[] body = TestEvents.event("webhook.test", 1, TICKETS.incrementAndGet());
        long t = TestSignatures.now();
        String header = secrets.length == 1 ? TestSignatures.header(secrets[0], t, body)
                : TestSignatures.header(secrets[0], secrets[1], t, body);
        return http.send(HttpRequest.newBuilder(webhookUri(inbox)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").header("X-MetaKit-Signature", header)
                .header("X-MetaKit-Event", "webhook.test").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode();
    }

    static WebhookVerification verification(RunningInbox inbox) {
        return inbox.camelContext().getRegistry().lookupByNameAndType("webhookVerification",
                WebhookVerification.class);
    }

    static WebhookSecrets webhookSecrets(RunningInbox inbox) {
        return inbox.camelContext().getRegistry().lookupByNameAndType("webhookSecrets", WebhookSecrets.class);
    }

    WebhookSecretStore store() {
        return new WebhookSecretStore(database.get());
    }

    public long storedGeneration() throws SQLException {
        return store().generation();
    }

    /** The webhook address of an instance: its port is the one {@link #settings} gave it, not RunningInbox's own. */
    URI webhookUri(RunningInbox inbox) {
        return URI.create("http://127.0.0.1:" + ports.get(inbox) + "/hooks/metakit");
    }

    @Override
    public void close() {
        try {
            sandbox.close();
        } finally {
            instances.forEach(RunningInbox::close);
        }
    }
}
