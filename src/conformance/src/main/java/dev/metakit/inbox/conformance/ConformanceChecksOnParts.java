package dev.metakit.inbox.conformance;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The conformance checks against a runtime that the test starts itself on {@link RuntimeParts} of its own (random
 * secrets, a free port), once for the checks: a subclass starts and stops its host on them.
 */
public abstract class ConformanceChecksOnParts extends ConformanceChecks implements RuntimeUnderTest {
    private RuntimeParts parts;

    /** Starts the host on {@code parts} ({@link RuntimeParts#settings()}); what it logs from here on is its log. */
    protected abstract void startHost(RuntimeParts parts) throws Exception;

    /** Stops the host, as its SIGTERM handler would; also called for a host that did not start, or stopped already. */
    protected abstract void stopHost() throws Exception;

    @BeforeAll
    void startOnParts() throws Exception {
        parts = RuntimeParts.start(GivenSecrets.random());
        startHost(parts);
    }

    @AfterAll
    void stopWithParts() throws Exception {
        try {
            stopHost();
        } finally {
            if (parts != null) {
                parts.close();
            }
        }
    }

    @Override
    protected RuntimeUnderTest runtime() {
        return this;
    }

    @Override
    public RuntimeParts parts() {
        return parts;
    }
}
