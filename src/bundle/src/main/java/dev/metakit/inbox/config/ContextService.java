package dev.metakit.inbox.config;

import org.apache.camel.CamelContext;
import org.apache.camel.CamelContextAware;
import org.apache.camel.support.service.ServiceSupport;

/**
 * A Camel service of the bundle that Camel hands its CamelContext. The plain beans' counterpart is
 * {@link ContextAwareBean}: a class has one superclass, and these take Camel's service lifecycle as theirs.
 */
public abstract class ContextService extends ServiceSupport implements CamelContextAware {
    private volatile CamelContext camelContext;

    @Override
    public void setCamelContext(CamelContext camelContext) {
        this.camelContext = camelContext;
    }

    @Override
    public CamelContext getCamelContext() {
        return camelContext;
    }
}
