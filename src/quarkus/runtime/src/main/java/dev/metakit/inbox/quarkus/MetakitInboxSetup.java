package dev.metakit.inbox.quarkus;

import dev.metakit.inbox.config.DurationMillisFunction;
import io.opentelemetry.api.OpenTelemetry;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import org.apache.camel.CamelContext;
import org.apache.camel.spi.CamelTracingService;
import org.apache.camel.quarkus.main.events.AfterConfigure;
import org.apache.camel.quarkus.main.events.BeforeInitialize;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import javax.sql.DataSource;

/**
 * The bundle in a Quarkus host's CamelContext, on Camel Quarkus's startup events: before anything reads a setting,
 * the bundle's defaults, its {@code {{metakit-millis:...}}} properties function (Camel Quarkus does not discover it
 * from the jar's service file as camel-main does), the application's default datasource and, when the host traces,
 * Camel's tracing on the host's OpenTelemetry ({@link HostTracing}); once Camel Quarkus has
 * configured the context, the bundle's route files.
 */
@Singleton
public class MetakitInboxSetup {
    static final String DEFAULT_ROUTE_FILES = "classpath:routes/*.camel.yaml";

    @ConfigProperty(name = "metakit.route-files", defaultValue = DEFAULT_ROUTE_FILES)
    String routeFiles;

    @Inject
    @Default
    Instance<DataSource> defaultDataSource;

    /** the host's OpenTelemetry (quarkus-opentelemetry), when it has one: the bundle's trace is then the host's */
    @Inject
    Instance<OpenTelemetry> hostOpenTelemetry;

    /** a Camel tracer of the host's own (camel-quarkus-opentelemetry2), which the bundle then leaves as it is */
    @Inject
    Instance<CamelTracingService> hostCamelTracer;

    void beforeInitialize(@Observes BeforeInitialize event) {
        CamelContext context = event.getCamelContext();
        HostTracing.install(context, hostOpenTelemetry, hostCamelTracer);
        QuarkusDefaults.addTo(context.getPropertiesComponent());
        DurationMillisFunction millis = new DurationMillisFunction();
        millis.setCamelContext(context);
        context.getPropertiesComponent().addPropertiesFunction(millis);
        ApplicationDataSource.bind(context, defaultDataSource);
    }

    void afterConfigure(@Observes AfterConfigure event) {
        QuarkusRouteFiles.load(event.getCamelContext(), routeFiles);
    }
}
