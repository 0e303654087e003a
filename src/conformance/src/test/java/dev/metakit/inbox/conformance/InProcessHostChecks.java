package dev.metakit.inbox.conformance;

import dev.metakit.inbox.sandbox.Sandbox;
import org.apache.camel.CamelContext;
import org.apache.camel.health.HealthCheck;
import org.apache.camel.health.HealthCheckHelper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import javax.sql.DataSource;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * The conformance checks against a host that runs in the test's JVM (a camel-main or a plain CamelContext host): an
 * embedded PostgreSQL, the sandbox as MetaKit, the bundle's settings as such a host gives them, and Camel's readiness
 * checks as the host's probe invokes them. A subclass starts and stops its host.
 */
public abstract class InProcessHostChecks extends ConformanceChecks implements RuntimeUnderTest {
    private final GivenSecrets secrets = GivenSecrets.random();
    private RestartablePostgres postgres;
    private Sandbox sandbox;
    private int port;
    private HostLog log;

    /** Starts the host serving on {@code port} with the bundle's {@code settings}. */
    protected abstract void startHost(int port, Properties settings) throws Exception;

    /** The host's CamelContext, once started. */
    protected abstract CamelContext context();

    /** Stops the host, as its SIGTERM handler would. */
    protected abstract void stopHost() throws Exception;

    @BeforeAll
    void boot() throws Exception {
        postgres = new RestartablePostgres();
        port = freePort();
        sandbox = secrets.metakit(webhook());
        Properties settings = new Properties();
        settings.put("metakit.webhook.secret", secrets.webhookSecret());
        settings.put("metakit.webhook.secret-previous", secrets.previousSecret());
        settings.put("metakit.database.url", postgres.jdbcUrl());
        settings.put("metakit.database.user", RestartablePostgres.USER);
        settings.put("metakit.database.password", secrets.databasePassword());
        settings.put("metakit.api.url", sandbox.apiBaseUrl().toString());
        settings.put("metakit.api.key", sandbox.apiKey());
        settings.put("metakit.ops.token", secrets.opsToken());
        settings.put("metakit.accounts", "1");
        log = HostLog.fromNow();
        startHost(port, settings);
    }

    @AfterAll
    void close() throws Exception {
        try {
            stopHost();
        } finally {
            if (sandbox != null) {
                sandbox.close();
            }
            if (postgres != null) {
                postgres.close();
            }
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

    /** Camel's readiness checks, as the host's probe invokes them. */
    @Override
    public Readiness readiness() {
        Collection<HealthCheck.Result> results = HealthCheckHelper.invokeReadiness(context(), "full");
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
        context().getRouteController().stopRoute(routeId);
        context().removeRoute(routeId);
    }

    @Override
    public boolean stopAsOnSigterm() throws Exception {
        stopHost();
        return true;
    }

    /** What the host logged since it started. */
    @Override
    public String log() throws Exception {
        return log.text();
    }

    /** A free port of this machine. */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
