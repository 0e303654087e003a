package dev.metakit.inbox.conformance.main;

import dev.metakit.inbox.conformance.ConformanceChecks;
import dev.metakit.inbox.conformance.GivenSecrets;
import dev.metakit.inbox.conformance.RestartablePostgres;
import dev.metakit.inbox.conformance.RuntimeUnderTest;
import dev.metakit.inbox.sandbox.Sandbox;
import org.apache.camel.health.HealthCheck;
import org.apache.camel.health.HealthCheckHelper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import javax.sql.DataSource;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;

/** The conformance checks against a camel-main host written from docs/camel-main.md ({@link CamelMainHost}). */
class CamelMainHostConformanceTest extends ConformanceChecks implements RuntimeUnderTest {
    private final GivenSecrets secrets = GivenSecrets.random();
    private RestartablePostgres postgres;
    private Sandbox sandbox;
    private CamelMainHost host;
    private int port;

    @BeforeAll
    void boot() throws Exception {
        postgres = new RestartablePostgres();
        port = CamelMainHost.freePort();
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
        host = CamelMainHost.start(port, settings);
    }

    @AfterAll
    void stop() throws Exception {
        if (host != null) {
            host.main.stop();
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
        Collection<HealthCheck.Result> results = HealthCheckHelper.invokeReadiness(host.main.getCamelContext(), "full");
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
        host.main.getCamelContext().getRouteController().stopRoute(routeId);
        host.main.getCamelContext().removeRoute(routeId);
    }

    /** What camel-main does on SIGTERM: stop the Main. */
    @Override
    public boolean stopAsOnSigterm() throws Exception {
        host.main.stop();
        return true;
    }

    @Override
    public String log() throws Exception {
        return host.log();
    }
}
