package dev.metakit.inbox.support;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/** {@code @ExtendWith(CleanDatabase.class)}: every test of the class starts on an empty test database. */
public final class CleanDatabase implements BeforeEachCallback {
    @Override
    public void beforeEach(ExtensionContext context) {
        TestDatabase.truncateAll();
    }
}
