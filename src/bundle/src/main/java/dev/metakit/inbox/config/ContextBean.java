package dev.metakit.inbox.config;

import org.apache.camel.CamelContext;
import org.apache.camel.CamelContextAware;
import org.apache.camel.support.service.ServiceHelper;
import org.apache.camel.support.service.ServiceSupport;

/**
 * A bean of the route files that holds something (a pool, threads, a mount, a registration with Camel) only while
 * its CamelContext runs. Its route file declares {@code initMethod: startWithContext} and {@code destroyMethod: close}:
 * the first checks the settings and hands the bean to the context, which starts it before the routes and stops it
 * after them; the second takes it back.
 * <p>
 * Creating a bean does nothing else, because camel-main creates every YAML bean twice: it pre-parses the route files
 * (binding a first copy of each bean) and then loads them, destroying that copy before it binds the copy it keeps,
 * all before the context starts. The destroyed copy is closed before it could start, so only the bean bound in the
 * registry ever starts.
 * <p>
 * A route step that calls the bean ({@code bean: ref: ...}) stops it with its route and starts it with the route's
 * next version (Camel's bean step does so for any bean that is a service): a route file saved into a running process
 * stops and starts the beans its routes call. So {@link #begin()} after {@link #end()} takes again what end gave back.
 */
public abstract class ContextBean extends ServiceSupport implements CamelContextAware, AutoCloseable {
    private CamelContext camelContext;
    private volatile boolean closed;

    /** The initMethod: refuses a setting left unset or wrong, then starts with the context (at once if it runs). */
    public void startWithContext() throws Exception {
        checkSettings();
        camelContext.addService(this, true, true);
    }

    /** Throws a {@link ConfigurationException} naming the property key of a setting left unset or wrong. */
    protected void checkSettings() {
    }

    /** Takes what the bean holds: called once, when the context starts. */
    protected abstract void begin() throws Exception;

    /** Gives back what {@link #begin()} took; also called for a bean that never began. */
    protected void end() throws Exception {
    }

    @Override
    protected final void doStart() throws Exception {
        if (closed) {
            return; // destroyed before its context started
        }
        checkSettings();
        begin();
    }

    @Override
    protected final void doStop() throws Exception {
        end();
    }

    /** The destroyMethod: stops the bean if it runs, and it never starts again. */
    @Override
    public void close() {
        closed = true;
        if (camelContext != null) {
            try {
                camelContext.removeService(this);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        ServiceHelper.stopService(this);
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
