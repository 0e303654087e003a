package dev.metakit.inbox.conformance;

import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import javax.sql.DataSource;
import java.net.URI;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The conformance checks against the standalone run (camel-main, its Vert.x front door, /observe/health/ready on the
 * management port), booted as {@code java -jar} boots it, once for the checks.
 */
class StandaloneConformanceTest extends ConformanceChecks implements RuntimeUnderTest {
    private final GivenSecrets secrets = GivenSecrets.random();
    private RestartablePostgres postgres;
    private Sandbox sandbox;
    private LogCapture log;
    private RunningInbox inbox;

    @BeforeAll
    void boot() throws Exception {
        postgres = new RestartablePostgres();
        // the sandbox's own traffic never starts: its webhook URL is not used
        sandbox = secrets.metakit(URI.create("http://127.0.0.1:9/hooks/metakit"));
        log = LogCapture.atOrAbove(Level.ALL);
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
        inbox = RunningInbox.start(settings);
    }

    @AfterAll
    void stop() throws Exception {
        if (inbox != null) {
            inbox.close();
        }
        if (log != null) {
            log.close();
        }
        if (sandbox != null) {
            sandbox.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    protected RuntimeUnderTest runtime() {
        return this;
    }

    @Override
    public URI webhook() {
        return inbox.webhookUri();
    }

    @Override
    public String webhookSecret() {
        return secrets.webhookSecret();
    }

    @Override
    public List<String> secrets() {
        return secrets.all();
    }

    @Override
    public Readiness readiness() throws Exception {
        // the probe's endpoint, every check listed (its default view lists only those that are down)
        HttpResponse<String> ready = inbox.management("/observe/health/ready?exposureLevel=full");
        return new Readiness(ready.statusCode() == 200, ready.body());
    }

    @Override
    public DataSource database() {
        return postgres.dataSource();
    }

    @Override
    public void stopDatabase() throws Exception {
        postgres.stop();
    }

    @Override
    public void startDatabase() throws Exception {
        postgres.start();
    }

    @Override
    public void leaveOutRoute(String routeId) throws Exception {
        inbox.camelContext().getRouteController().stopRoute(routeId);
        inbox.camelContext().removeRoute(routeId);
    }

    /** camel-main's stop, which is what its SIGTERM hook runs (the jar's process: SandboxModeIT). */
    @Override
    public boolean stopAsOnSigterm() {
        inbox.close();
        return true;
    }

    @Override
    public String log() {
        return String.join("\n", log.lines());
    }
}
