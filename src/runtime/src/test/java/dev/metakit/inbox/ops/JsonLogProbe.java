package dev.metakit.inbox.ops;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Run in a child JVM by {@link JsonLogsTest}: logs what the bundle logs, an INFO line and a WARN with a cause. */
public final class JsonLogProbe {
    private JsonLogProbe() {
    }

    public static void main(String[] args) {
        Logger log = LoggerFactory.getLogger("dev.metakit.inbox.reconcile");
        log.info("Reconciled account 2: 1 position opened");
        log.warn("Inbox row k failed after 8 attempts (account 2, tickets [77]): boom",
                new IllegalStateException("boom", new java.io.IOException("connection reset")));
    }
}
