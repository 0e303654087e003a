package dev.metakit.inbox.config;

import org.apache.camel.CamelContext;
import org.apache.camel.RuntimeCamelException;
import org.apache.camel.StartupListener;

import java.util.function.Consumer;

/**
 * Runs an action once a CamelContext has fully started: its services too, such as camel-main's route reload watcher,
 * which is not started yet when the context's routes are.
 */
public final class WhenFullyStarted implements StartupListener {
    private final Consumer<CamelContext> action;

    private WhenFullyStarted(Consumer<CamelContext> action) {
        this.action = action;
    }

    public static void run(CamelContext context, Consumer<CamelContext> action) {
        try {
            context.addStartupListener(new WhenFullyStarted(action));
        } catch (Exception e) {
            throw RuntimeCamelException.wrapRuntimeException(e);
        }
    }

    @Override
    public void onCamelContextStarted(CamelContext context, boolean alreadyStarted) {
        // not yet: the context's services start after its routes
    }

    @Override
    public void onCamelContextFullyStarted(CamelContext context, boolean alreadyStarted) {
        action.accept(context);
    }
}
