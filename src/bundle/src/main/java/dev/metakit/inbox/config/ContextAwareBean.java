package dev.metakit.inbox.config;

import org.apache.camel.CamelContext;
import org.apache.camel.CamelContextAware;

/**
 * A plain object of the bundle that Camel hands its CamelContext (a bean of the route files, a properties function):
 * where a bean reads what it must not be given as a placeholder, its secret settings ({@link #secret}).
 */
public abstract class ContextAwareBean implements CamelContextAware {
    private CamelContext camelContext;

    /** A secret setting: the value the bean was given, else the context's ({@link SecretSettings#read}). */
    protected String secret(String key, String given) {
        return SecretSettings.read(camelContext, key, given);
    }

    @Override
    public void setCamelContext(CamelContext camelContext) {
        this.camelContext = camelContext;
    }

    @Override
    public CamelContext getCamelContext() {
        return camelContext;
    }
}
