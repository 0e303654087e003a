package dev.metakit.inbox.conformance.plain;

import dev.metakit.inbox.worker.InboxToPositionRoutes;
import org.apache.camel.CamelContext;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpServer;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpServerConfiguration;
import org.apache.camel.component.properties.PropertiesComponent;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.spi.Resource;
import org.apache.camel.support.PluginHelper;
import org.apache.camel.support.ResourceHelper;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * The smallest host of the bundle: a DefaultCamelContext (no camel-main, no platform), Camel's Vert.x platform-http
 * server, the bundle's route files and its Java routes as a RouteBuilder, the host's settings (the bundle's jar has
 * the defaults of the rest). Whatever the bundle
 * promises here it keeps by itself, with nothing of a runtime's own around it.
 */
final class PlainCamelHost {
    private PlainCamelHost() {
    }

    /** A started context serving the bundle on {@code port}, with {@code settings} over the bundle's defaults. */
    static CamelContext start(Path projectDir, int port, Properties settings) throws Exception {
        CamelContext context = new DefaultCamelContext();
        PropertiesComponent properties = (PropertiesComponent) context.getPropertiesComponent();
        // the test's settings, never a variable of the test JVM's environment
        properties.setEnvironmentVariableMode(PropertiesComponent.ENVIRONMENT_VARIABLES_MODE_NEVER);
        properties.setOverrideProperties(settings);

        VertxPlatformHttpServerConfiguration http = new VertxPlatformHttpServerConfiguration();
        http.setBindHost("127.0.0.1");
        http.setBindPort(port);
        context.addService(new VertxPlatformHttpServer(http));

        List<Resource> routeFiles;
        try (Stream<Path> files = Files.list(projectDir.resolve("routes"))) {
            // every file a host gets (the bundle's jar leaves out the standalone run's own beans)
            routeFiles = files.filter(p -> p.toString().endsWith(".camel.yaml"))
                    .filter(p -> !p.getFileName().toString().equals("standalone.camel.yaml")).sorted()
                    .map(p -> ResourceHelper.resolveResource(context, "file:" + p)).toList();
        }
        PluginHelper.getRoutesLoader(context).loadRoutes(routeFiles);
        context.addRoutes(new InboxToPositionRoutes());
        context.start();
        return context;
    }
}
