package dev.metakit.inbox.worker;

import dev.metakit.inbox.support.ShippedWorker;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Each test on an emptied test database, and the workers it started (as shipped, its settings changed) stopped after
 * it ({@code @RegisterExtension}): a worker left running beats on and renews the leases of its work in hand, and a
 * later test of the same JVM (which empties the inbox) would read its renewal's "no longer holds" line as its own.
 */
final class TestWorkers implements BeforeEachCallback, AfterEachCallback {
    private final List<InboxWorker> workers = new ArrayList<>();

    InboxWorker start(String instanceId) {
        return start(instanceId, w -> { });
    }

    InboxWorker start(String instanceId, Consumer<InboxWorker> settings) {
        InboxWorker worker = ShippedWorker.create(instanceId);
        settings.accept(worker);
        worker.start();
        workers.add(worker);
        return worker;
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        TestDatabase.truncateAll();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        workers.forEach(InboxWorker::stop);
        workers.clear();
    }
}
