package dev.metakit.inbox.conformance.plain;

import dev.metakit.inbox.conformance.ConformanceChecks;
import dev.metakit.inbox.conformance.RestartablePostgres;
import dev.metakit.inbox.conformance.RuntimeUnderTest;
import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxSettings;
import org.apache.camel.CamelContext;
import org.apache.camel.health.HealthCheck;
import org.apache.camel.health.HealthCheckHelper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import javax.sql.DataSource;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;

/** The conformance checks against the bundle in a plain CamelContext with Vert.x platform-http (PlainCamelHost). */
class PlainCamelContextConformanceTest extends ConformanceChecks implements RuntimeUnderTest {
    private static final String SECRET = "whsec_plain_host_current_5d1f";
    private static final String PREVIOUS_SECRET = "whsec_plain_host_previous_77ac";
    private static final String DATABASE_PASSWORD = "plain-host-db-password-3e9b";
    private static final String OPS_TOKEN = "plain-host-ops-token-0123456789";
    private static final Path LOG = Path.of(System.getProperty("metakit.plain.log", "target/plain-camel-host.log"));

    private RestartablePostgres postgres;
    private Sandbox sandbox;
    private CamelContext context;
    private int port;

    @BeforeAll
    void boot() throws Exception {
        postgres = new RestartablePostgres();
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        // the API the worker reconciles against; its traffic never starts (the checks send their own deliveries)
        sandbox = new Sandbox(SandboxSettings.builder().webhookUrl(webhook().toString()).webhookSecret(SECRET)
                .accounts(1).faults(SandboxFaults.none()).operations(1).apiPort(0).build());
        Properties settings = new Properties();
        settings.put("metakit.webhook.secret", SECRET);
        settings.put("metakit.webhook.secret-previous", PREVIOUS_SECRET);
        settings.put("metakit.database.url", postgres.jdbcUrl());
        settings.put("metakit.database.user", RestartablePostgres.USER);
        settings.put("metakit.database.password", DATABASE_PASSWORD);
        settings.put("metakit.api.url", sandbox.apiBaseUrl().toString());
        settings.put("metakit.api.key", sandbox.apiKey());
        settings.put("metakit.ops.token", OPS_TOKEN);
        settings.put("metakit.accounts", "1");
        context = PlainCamelHost.start(Path.of(System.getProperty("metakit.test.basedir", "../..")), port, settings);
    }

    @AfterAll
    void stop() throws Exception {
        if (context != null) {
            context.close();
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
        return URI.create("http://127.0.0.1:" + port + "/hooks/metakit");
    }

    @Override
    public String webhookSecret() {
        return SECRET;
    }

    @Override
    public List<String> secrets() {
        return List.of(SECRET, PREVIOUS_SECRET, DATABASE_PASSWORD, sandbox.apiKey(), OPS_TOKEN);
    }

    /** A plain CamelContext has no probe endpoint: Camel's readiness checks, as a host's probe would invoke them. */
    @Override
    public Readiness readiness() {
        java.util.Collection<HealthCheck.Result> results = HealthCheckHelper.invokeReadiness(context, "full");
        boolean up = results.stream().allMatch(r -> r.getState() == HealthCheck.State.UP);
        return new Readiness(up, results.stream().map(r -> r.getCheck().getId() + " " + r.getState()
                + r.getMessage().map(m -> " " + m).orElse("")).collect(Collectors.joining("\n")));
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
        context.getRouteController().stopRoute(routeId);
        context.removeRoute(routeId);
    }

    @Override
    public String log() throws Exception {
        return Files.readString(LOG);
    }
}
