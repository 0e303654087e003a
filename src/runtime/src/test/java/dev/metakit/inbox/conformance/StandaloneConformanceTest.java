package dev.metakit.inbox.conformance;

import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import org.apache.logging.log4j.Level;

import java.net.URI;
import java.net.http.HttpResponse;

/**
 * The conformance checks against the standalone run (camel-main, its Vert.x front door, /observe/health/ready on the
 * management port), booted as {@code java -jar} boots it, once for the checks.
 */
class StandaloneConformanceTest extends ConformanceChecksOnParts {
    private LogCapture log;
    private RunningInbox inbox;

    @Override
    protected void startHost(RuntimeParts parts) {
        log = LogCapture.atOrAbove(Level.ALL);
        inbox = RunningInbox.start(parts.settings());
    }

    @Override
    protected void stopHost() {
        if (inbox != null) {
            inbox.close();
        }
        if (log != null) {
            log.close();
        }
    }

    @Override
    public URI webhook() {
        return inbox.webhookUri();
    }

    @Override
    public Readiness readiness() throws Exception {
        // the probe's endpoint, every check listed (its default view lists only those that are down)
        HttpResponse<String> ready = inbox.management("/observe/health/ready?exposureLevel=full");
        return new Readiness(ready.statusCode() == 200, ready.body());
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
