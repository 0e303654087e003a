package dev.metakit.inbox.support;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;

/**
 * Per test: a clean database, a MetaKit test double, and the bundle a test starts against it, all closed after the
 * test. Registered with {@code @RegisterExtension} on an instance field.
 */
public final class InboxFixture implements BeforeEachCallback, AfterEachCallback {
    private final FakeMetaKit metakit = new FakeMetaKit();
    private final Instant t0 = Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60);
    private RunningInbox inbox;

    @Override
    public void beforeEach(ExtensionContext context) {
        TestDatabase.truncateAll();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        try {
            closeInbox();
        } finally {
            metakit.close();
        }
    }

    public FakeMetaKit metakit() {
        return metakit;
    }

    /** A minute before the test, to the second: when the positions a test opens at the test double opened. */
    public Instant t0() {
        return t0;
    }

    /** The bundle against the test double with {@link RunningInbox#againstFakeMetaKit}'s settings plus these. */
    public RunningInbox start(Map<String, String> overrides) {
        closeInbox();
        inbox = RunningInbox.againstFakeMetaKit(metakit, overrides);
        return inbox;
    }

    /** As {@link #start(Map)}, with {@code environment} as the process environment. */
    public RunningInbox start(Map<String, String> environment, Map<String, String> overrides) {
        closeInbox();
        inbox = RunningInbox.againstFakeMetaKit(metakit, environment, overrides);
        return inbox;
    }

    /** The bundle with exactly these settings (the API's URL and key included). */
    public RunningInbox startWith(Map<String, String> settings) {
        closeInbox();
        inbox = RunningInbox.start(settings);
        return inbox;
    }

    private void closeInbox() {
        if (inbox != null) {
            inbox.close();
            inbox = null;
        }
    }
}
