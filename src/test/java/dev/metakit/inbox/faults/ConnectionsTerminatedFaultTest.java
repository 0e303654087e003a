package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.StoppablePostgres;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every session of the bundle ended by PostgreSQL (pg_terminate_backend: what an administrator, a pooler restart or a
 * failover does), twice, under ingest, at the default settings: the process lives, nothing acked is lost, and the
 * backlog drains within 10 s (work whose outcome could not be written on a dead connection is recorded on a new one).
 */
class ConnectionsTerminatedFaultTest {
    private static final int ACCOUNTS = 10;

    @TempDir
    Path dataDir;

    private StoppablePostgres postgres;
    private FakeMetaKit metakit;
    private RunningInbox inbox;

    @BeforeEach
    void start() throws Exception {
        postgres = new StoppablePostgres(dataDir);
        metakit = new FakeMetaKit();
        metakit.openOnePositionEach(ACCOUNTS, "0.10");
        Map<String, String> settings = new HashMap<>(postgres.bundleSettings());
        settings.put("metakit.api.url", metakit.url());
        settings.put("metakit.api.key", FakeMetaKit.API_KEY);
        inbox = RunningInbox.start(settings);
    }

    @AfterEach
    void stopAll() throws Exception {
        if (inbox != null) {
            inbox.close();
        }
        metakit.close();
        postgres.close();
    }

    @Test
    void everySessionTerminatedTwiceUnderIngestLosesNothingAckedAndTheBacklogDrainsWithinTenSeconds()
            throws Exception {
        SignedLoad load = new SignedLoad(inbox.webhookUri(), RunningInbox.SECRET, 8, 50, ACCOUNTS).start();
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(SignedLoad.Sent::acked) >= 200);

        int first = postgres.terminateClientSessions();
        long acked = load.count(SignedLoad.Sent::acked);
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(SignedLoad.Sent::acked) >= acked + 100);
        int second = postgres.terminateClientSessions();
        long secondAt = System.nanoTime();
        long ackedAfterSecond = load.count(SignedLoad.Sent::acked);
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(SignedLoad.Sent::acked) >= ackedAfterSecond + 100);
        List<SignedLoad.Sent> sent = load.stop();
        long stoppedAt = System.nanoTime();

        Set<String> ackedKeys = SignedLoad.ackedKeys(sent);
        Duration drained = DatabaseOutageFaultTest.untilProcessed(postgres, ackedKeys, secondAt, Duration.ofSeconds(30));
        Set<String> ackedButMissing = new HashSet<>(ackedKeys);
        ackedButMissing.removeAll(TestDatabase.strings(postgres.dataSource(), "select delivery_key from webhook_inbox"));
        System.out.printf("FAULT connections-terminated x2: sessions ended %d then %d; sent=%d statuses=%s; every acked"
                        + " row (%d) processed %d ms after the second termination (%d ms after the load stopped);"
                        + " acked-but-missing=%d%n", first, second, sent.size(), SignedLoad.byStatus(sent),
                ackedKeys.size(), drained.toMillis(), Duration.ofNanos(System.nanoTime() - stoppedAt).toMillis(),
                ackedButMissing.size());

        assertThat(first).as("sessions ended the first time").isPositive();
        assertThat(second).as("sessions ended the second time").isPositive();
        assertThat(inbox.camelContext().isStarted()).as("the bundle runs on").isTrue();
        await().atMost(Duration.ofSeconds(10)).until(() -> inbox.healthStatus() == 200);
        assertThat(ackedButMissing).as("acked but missing").isEmpty();
        assertThat(drained).as("backlog drained after the second termination").isLessThan(Duration.ofSeconds(10));
    }
}
