package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxProcess;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** kill -9 of the consumer process (the shaded jar) in the middle of steady ingest from several clients. */
class ConsumerKillFaultIT {
    private static final int ACCOUNTS = 10;

    @TempDir
    Path workDir;

    private FakeMetaKit metakit;
    private InboxProcess consumer;

    @BeforeEach
    void start() {
        metakit = FakeMetaKit.onCleanDatabase(ACCOUNTS);
        // the default lease (120 s): the restarted process (the same host, so the same instance id) takes the killed
        // boot's claims back at its first claim
        consumer = new InboxProcess(workDir, metakit.url(), Map.of(
                "METAKIT_WORKER_POLL_INTERVAL_MILLIS", "200",
                "METAKIT_RECONCILE_INTERVAL", "PT1H",
                "METAKIT_STATUS_INTERVAL", "PT1H"));
    }

    @AfterEach
    void stop() throws Exception {
        consumer.close();
        metakit.close();
    }

    @Test
    void everyDeliveryAckedBeforeAKillNineIsStoredAndProcessedIntoTheApisStateAfterTheRestart() throws Exception {
        consumer.start();
        SignedLoad load = new SignedLoad(consumer.webhookUri(), RunningInbox.SECRET, 6, 0, ACCOUNTS).start();
        long began = System.nanoTime();
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(SignedLoad.Sent::acked) >= 300);
        // killed mid-drain: the worker has processed rows of this load and has more waiting
        await().atMost(Duration.ofSeconds(20)).until(() ->
                TestDatabase.scalar("select count(*) from webhook_inbox where processed_at is not null") > 0
                        && TestDatabase.scalar("select count(*) from webhook_inbox where processed_at is null") > 0);

        consumer.kill();
        long killedAt = System.nanoTime();
        long ackedBeforeKill = load.count(s -> s.acked() && s.endNanos() < killedAt);
        // the truth moves while the consumer is dead: only reconciles after the restart see it
        metakit.openOnePositionEach(ACCOUNTS, "0.20");

        consumer.start();
        long restartedAt = System.nanoTime();
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(s -> s.acked() && s.startNanos() > restartedAt)
                >= 200 && System.nanoTime() - began > Duration.ofSeconds(5).toNanos());
        List<SignedLoad.Sent> sent = load.stop();

        Set<String> acked = SignedLoad.ackedKeys(sent);
        Set<String> stored = TestDatabase.strings(TestDatabase.dataSource(), "select delivery_key from webhook_inbox");
        Set<String> ackedButMissing = new HashSet<>(acked);
        ackedButMissing.removeAll(stored);
        Set<String> sentKeys = new HashSet<>();
        sent.forEach(s -> sentKeys.add(s.key()));
        long noAnswer = sent.stream().filter(s -> s.status() == -1).count();
        long storedWithoutAck = stored.stream().filter(k -> !acked.contains(k)).count();
        System.out.printf("FAULT kill-9: sent=%d acked=%d (before kill %d) no-answer=%d statuses=%s stored=%d "
                        + "stored-without-ack=%d acked-but-missing=%d restart-to-ready=%d ms%n",
                sent.size(), acked.size(), ackedBeforeKill, noAnswer, SignedLoad.byStatus(sent), stored.size(),
                storedWithoutAck, ackedButMissing.size(), Duration.ofNanos(restartedAt - killedAt).toMillis());

        assertThat(ackedBeforeKill).isGreaterThan(0);
        assertThat(ackedButMissing).as("acked but missing").isEmpty();
        assertThat(sentKeys).as("nothing stored that no client sent").containsAll(stored);
        // while the restarted process boots, its public port answers 503 with Retry-After before the ingest route is
        // added: not a 2xx, so MetaKit retries. A delivery sent once it is ready is answered 200 (one sent before may
        // get its 503 just after: the health poll and the delivery race, and the 503 is right for when it was sent)
        assertThat(sent).as("a ready consumer answers 200")
                .filteredOn(s -> s.startNanos() > restartedAt)
                .allSatisfy(s -> assertThat(s.status()).isEqualTo(200));
        assertThat(sent).as("before, a refusal MetaKit retries, or nothing at all while dead")
                .filteredOn(s -> s.status() != 200 && s.status() != -1)
                .allSatisfy(s -> assertThat(s.status()).isBetween(400, 599));

        long drainStart = System.nanoTime();
        await().atMost(Duration.ofSeconds(60)).until(() ->
                TestDatabase.scalar("select count(*) from webhook_inbox where processed_at is null") == 0);
        System.out.printf("FAULT kill-9: all %d rows processed %d ms after the load stopped%n", stored.size(),
                Duration.ofNanos(System.nanoTime() - drainStart).toMillis());
        assertThat(TestDatabase.scalar("select count(*) from webhook_inbox where failed_at is not null")).isZero();
        assertThat(TestDatabase.scalar("select count(*) from positions")).isEqualTo(ACCOUNTS);
        assertThat(TestDatabase.scalar("select count(*) from positions where status = 'open' and volume = 0.20"
                + " and ticket = account_id * 100")).as("every account as the API lists it now").isEqualTo(ACCOUNTS);
    }
}
