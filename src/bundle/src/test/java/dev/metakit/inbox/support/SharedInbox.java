package dev.metakit.inbox.support;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.Map;

/**
 * One bundle for a whole test class (its boot is the slow part), on a database emptied before each test. Registered
 * with {@code @RegisterExtension} on a static field.
 */
public final class SharedInbox implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {
    private final Map<String, String> settings;
    private RunningInbox inbox;

    private SharedInbox(Map<String, String> settings) {
        this.settings = settings;
    }

    /** The bundle with these settings over the tests' ({@link RunningInbox#start(Map)}). */
    public static SharedInbox with(Map<String, String> settings) {
        return new SharedInbox(settings);
    }

    /** Only the ingest route and the beans: what answers a delivery, nothing that works on the rows after. */
    public static SharedInbox ingestOnly() {
        return with(Map.of("camel.main.routes-include-pattern", RunningInbox.onlyRoutes("beans", "ingest")));
    }

    public RunningInbox inbox() {
        return inbox;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        TestDatabase.truncateAll();
        inbox = RunningInbox.start(settings);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        TestDatabase.truncateAll();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (inbox != null) {
            inbox.close();
        }
    }
}
