package dev.metakit.inbox.conformance.main;

import dev.metakit.inbox.conformance.InProcessHostChecks;
import org.apache.camel.CamelContext;

import java.util.Properties;

/** The conformance checks against a camel-main host written from docs/camel-main.md ({@link CamelMainHost}). */
class CamelMainHostConformanceTest extends InProcessHostChecks {
    private CamelMainHost host;

    @Override
    protected void startHost(int port, Properties settings) throws Exception {
        host = CamelMainHost.start(port, settings);
    }

    /** The host's CamelContext, once started. */
    @Override
    public CamelContext camelContext() {
        return host.main.getCamelContext();
    }

    /** What camel-main does on SIGTERM: stop the Main. */
    @Override
    protected void stopHost() {
        if (host != null) {
            host.main.stop();
        }
    }
}
