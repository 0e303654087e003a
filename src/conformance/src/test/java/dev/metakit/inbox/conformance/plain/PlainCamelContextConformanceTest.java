package dev.metakit.inbox.conformance.plain;

import dev.metakit.inbox.conformance.ConformanceChecks;
import dev.metakit.inbox.conformance.GivenSecrets;
import dev.metakit.inbox.conformance.RuntimeOnParts;
import dev.metakit.inbox.conformance.RuntimeParts;
import dev.metakit.inbox.conformance.RuntimeUnderTest;
import org.apache.camel.CamelContext;
import org.apache.camel.health.HealthCheck;
import org.apache.camel.health.HealthCheckHelper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.stream.Collectors;

/** The conformance checks against the bundle in a plain CamelContext with Vert.x platform-http (PlainCamelHost). */
class PlainCamelContextConformanceTest extends ConformanceChecks implements RuntimeOnParts {
    private static final Path LOG = Path.of(System.getProperty("metakit.plain.log", "target/plain-camel-host.log"));

    private RuntimeParts parts;
    private CamelContext context;

    @BeforeAll
    void boot() throws Exception {
        parts = RuntimeParts.start(GivenSecrets.random());
        Properties settings = new Properties();
        settings.putAll(parts.settings());
        context = PlainCamelHost.start(Path.of(System.getProperty("metakit.test.basedir", "../..")), parts.port(),
                settings);
    }

    @AfterAll
    void stop() throws Exception {
        if (context != null) {
            context.close();
        }
        if (parts != null) {
            parts.close();
        }
    }

    @Override
    protected RuntimeUnderTest runtime() {
        return this;
    }

    @Override
    public RuntimeParts parts() {
        return parts;
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
    public void leaveOutRoute(String routeId) throws Exception {
        context.getRouteController().stopRoute(routeId);
        context.removeRoute(routeId);
    }

    /** What a plain host's SIGTERM handler would do: close its CamelContext. */
    @Override
    public boolean stopAsOnSigterm() throws Exception {
        context.close();
        return true;
    }

    @Override
    public String log() throws Exception {
        return Files.readString(LOG);
    }
}
