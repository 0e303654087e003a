package dev.metakit.inbox.ingest;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.camel.spi.CamelEvent;
import org.apache.camel.support.EventNotifierSupport;
import org.apache.camel.support.service.ServiceHelper;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Stopping the bundle while deliveries arrive, as a SIGTERM does (camel-main's stop is what its shutdown hook runs):
 * the deliveries caught mid-way are answered 503 for MetaKit to retry, which is the design and no news, so nothing at
 * WARN or above; and every delivery answered 2xx has its row. Against the MetaKit test double, so that the worker's
 * reconciles and the status watch are mid-call too.
 */
class StopUnderTrafficTest {

    @Test
    void aStopUnderTrafficAnswersTheDeliveriesInFlight503AtInfoAndLosesNoAckedOne() throws Exception {
        List<SignedLoad.Sent> sent;
        List<String> lines;
        try (FakeMetaKit metakit = FakeMetaKit.onCleanDatabase(4);
             LogCapture log = LogCapture.atOrAbove(Level.INFO)) {
            RunningInbox inbox = RunningInbox.againstFakeMetaKit(metakit, Map.of());
            SignedLoad load = new SignedLoad(inbox.webhookUri(), RunningInbox.SECRET, 16, 0, 4).start();
            await().atMost(Duration.ofSeconds(30)).until(() -> load.count(SignedLoad.Sent::acked) >= 200);
            holdTheStopUntilADeliveryIsRefused(inbox, load);
            inbox.close();
            sent = load.stop();
            lines = log.lines();
        }
        assertThat(lines).as("lines at WARN or above while stopping under traffic")
                .noneMatch(line -> line.startsWith("WARN ") || line.startsWith("ERROR "));
        assertThat(lines).as("the deliveries refused mid-way are said at INFO")
                .anyMatch(line -> line.startsWith("INFO ")
                        && line.contains("Delivery not stored while stopping, answered 503 so MetaKit retries"));
        assertThat(sent).as("the stop refused some deliveries with 503").anyMatch(s -> s.status() == 503);
        Set<String> stored = new HashSet<>();
        TestDatabase.rows("select delivery_key from webhook_inbox").forEach(r -> stored.add((String) r.get("delivery_key")));
        assertThat(stored).as("every delivery answered 2xx has its row").containsAll(SignedLoad.ackedKeys(sent));
    }

    /**
     * The stop begins (the context is stopping, the inbox refuses) and waits here, on its own thread, until a delivery
     * got its 503: the window between the refusal and the ingest route's stop is otherwise milliseconds wide, and a
     * run that never hit it would test nothing.
     */
    private static void holdTheStopUntilADeliveryIsRefused(RunningInbox inbox, SignedLoad load) {
        EventNotifierSupport hold = new EventNotifierSupport() {
            @Override
            public boolean isEnabled(CamelEvent event) {
                return event instanceof CamelEvent.CamelContextStoppingEvent;
            }

            @Override
            public void notify(CamelEvent event) {
                await().atMost(Duration.ofSeconds(10)).until(() -> load.count(s -> s.status() == 503) > 0);
            }
        };
        inbox.camelContext().getManagementStrategy().addEventNotifier(hold);
        ServiceHelper.startService(hold);
    }
}
