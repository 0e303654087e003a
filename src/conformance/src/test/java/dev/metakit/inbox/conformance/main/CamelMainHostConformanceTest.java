package dev.metakit.inbox.conformance.main;

import dev.metakit.inbox.conformance.ConformanceChecks;
import dev.metakit.inbox.conformance.GivenSecrets;
import dev.metakit.inbox.conformance.RestartablePostgres;
import dev.metakit.inbox.conformance.RuntimeUnderTest;
import dev.metakit.inbox.sandbox.Sandbox;
import org.apache.camel.health.HealthCheck;
import org.apache.camel.health.HealthCheckHelper;
import org.apache.camel.main.Main;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import javax.sql.DataSource;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * The conformance checks against a camel-main host written from docs/camel-main.md: its own Main and
 * application.properties (camel-main-host/application.properties: the host's keys, the bundle's route files and
 * RouteBuilder, no metakit.* default), camel-platform-http-main as its HTTP server, the bundle's settings as the host
 * would give them. The bundle's defaults come from its jar.
 */
class CamelMainHostConformanceTest extends ConformanceChecks implements RuntimeUnderTest {
    private static final Path LOG = Path.of(System.getProperty("metakit.plain.log", "target/plain-camel-host.log"));

    private final GivenSecrets secrets = GivenSecrets.random();
    private RestartablePostgres postgres;
    private Sandbox sandbox;
    private Main main;
    private int port;
    private long logStart;

    @BeforeAll
    void boot() throws Exception {
        logStart = Files.exists(LOG) ? Files.size(LOG) : 0;
        postgres = new RestartablePostgres();
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        sandbox = secrets.metakit(webhook());
        Properties settings = new Properties();
        settings.put("camel.server.port", String.valueOf(port));
        settings.put("metakit.webhook.secret", secrets.webhookSecret());
        settings.put("metakit.webhook.secret-previous", secrets.previousSecret());
        settings.put("metakit.database.url", postgres.jdbcUrl());
        settings.put("metakit.database.user", RestartablePostgres.USER);
        settings.put("metakit.database.password", secrets.databasePassword());
        settings.put("metakit.api.url", sandbox.apiBaseUrl().toString());
        settings.put("metakit.api.key", sandbox.apiKey());
        settings.put("metakit.ops.token", secrets.opsToken());
        settings.put("metakit.accounts", "1");
        main = new Main();
        main.setPropertyPlaceholderLocations("classpath:camel-main-host/application.properties");
        main.setOverrideProperties(settings);
        main.start();
    }

    @AfterAll
    void stop() throws Exception {
        if (main != null) {
            main.stop();
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
        return secrets.webhookSecret();
    }

    @Override
    public List<String> secrets() {
        return secrets.all();
    }

    /** Camel's readiness checks, as the host's probe (camel.management's /observe/health/ready) invokes them. */
    @Override
    public Readiness readiness() {
        Collection<HealthCheck.Result> results = HealthCheckHelper.invokeReadiness(main.getCamelContext(), "full");
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
        main.getCamelContext().getRouteController().stopRoute(routeId);
        main.getCamelContext().removeRoute(routeId);
    }

    /** What camel-main does on SIGTERM: stop the Main. */
    @Override
    public boolean stopAsOnSigterm() throws Exception {
        main.stop();
        return true;
    }

    /** This host's part of the test JVM's log (the plain host's test may have written before it). */
    @Override
    public String log() throws Exception {
        byte[] all = Files.readAllBytes(LOG);
        return new String(Arrays.copyOfRange(all, (int) Math.min(logStart, all.length), all.length),
                StandardCharsets.UTF_8);
    }
}
