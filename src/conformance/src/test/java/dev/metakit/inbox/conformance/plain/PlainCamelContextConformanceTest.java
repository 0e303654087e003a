package dev.metakit.inbox.conformance.plain;

import dev.metakit.inbox.conformance.InProcessHostChecks;
import org.apache.camel.CamelContext;

import java.nio.file.Path;
import java.util.Properties;

/** The conformance checks against the bundle in a plain CamelContext with Vert.x platform-http (PlainCamelHost). */
class PlainCamelContextConformanceTest extends InProcessHostChecks {
    private CamelContext context;

    @Override
    protected void startHost(int port, Properties settings) throws Exception {
        context = PlainCamelHost.start(Path.of(System.getProperty("metakit.test.basedir", "../..")), port, settings);
    }

    /** The host's CamelContext, once started. */
    @Override
    public CamelContext camelContext() {
        return context;
    }

    /** What a plain host's SIGTERM handler would do: close its CamelContext. */
    @Override
    protected void stopHost() throws Exception {
        if (context != null) {
            context.close();
        }
    }
}
