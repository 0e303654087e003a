package dev.metakit.inbox.support;

import dev.metakit.inbox.reconcile.AccountReconciler;
import dev.metakit.inbox.worker.InboxWorker;

import java.util.function.Function;
import java.util.Optional;

/** An {@link InboxWorker} on the test database with the settings application.properties gives it by default. */
public final class ShippedWorker {
    private ShippedWorker() {
    }

    public static InboxWorker create(String instanceId) {
        Function<String, Optional<String>> shipped = ShippedProperties.resolver(ShippedProperties.file(), name -> null);
        Function<String, String> value = key -> shipped.apply(key).orElseThrow(() ->
                new IllegalStateException(key + " is missing from application.properties"));
        InboxWorker worker = new InboxWorker();
        worker.setDataSource(TestDatabase.dataSource());
        worker.setAccountReconciler(new AccountReconciler(TestDatabase.dataSource()));
        worker.setInstanceId(instanceId);
        worker.setTradeEvents(value.apply("metakit.trade-events"));
        worker.setBatchSize(Integer.parseInt(value.apply("metakit.worker.batch-size")));
        worker.setClaimMaxRows(Integer.parseInt(value.apply("metakit.worker.claim-max-rows")));
        worker.setLeaseSeconds(Long.parseLong(value.apply("metakit.worker.lease-seconds")));
        worker.setMaxAttempts(Integer.parseInt(value.apply("metakit.worker.max-attempts")));
        worker.setBackoffBaseMillis(Long.parseLong(value.apply("metakit.worker.backoff-base-millis")));
        worker.setBackoffMaxMillis(Long.parseLong(value.apply("metakit.worker.backoff-max-millis")));
        worker.setHeartbeatMillis(Long.parseLong(value.apply("metakit.worker.heartbeat-millis")));
        worker.setDeadAfterMillis(Long.parseLong(value.apply("metakit.worker.dead-after-millis")));
        return worker;
    }
}
