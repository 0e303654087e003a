package dev.metakit.inbox.support;

import org.apache.camel.CamelContext;
import org.apache.camel.component.properties.PropertiesComponent;
import org.apache.camel.main.BaseMainSupport;
import org.apache.camel.main.MainListenerSupport;

/**
 * The bundle under test takes its settings from the test, never from the test JVM's environment. Camel reads the
 * variable it derives from a key ({@code METAKIT_DATABASE_URL} for {@code metakit.database.url}) before the override
 * properties a test sets, so a production database exported in the developer's shell would win over the test
 * database; this turns that lookup off. The {@code {{env:...}}} placeholders of application.properties (the documented
 * names) are untouched, and the tests override the database settings those name.
 */
public final class NoEnvironmentOverrides extends MainListenerSupport {

    /** For a context a test builds by hand. */
    public static void apply(CamelContext context) {
        ((PropertiesComponent) context.getPropertiesComponent())
                .setEnvironmentVariableMode(PropertiesComponent.ENVIRONMENT_VARIABLES_MODE_NEVER);
    }

    /** For camel-main: before any bean is created. */
    @Override
    public void beforeConfigure(BaseMainSupport main) {
        apply(main.getCamelContext());
    }
}
