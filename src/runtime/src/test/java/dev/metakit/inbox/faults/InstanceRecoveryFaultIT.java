package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.InboxProcess;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** An instance killed ({@code kill -9}) while it holds claimed rows: restarted, or one of two (docs/faults.md). */
class InstanceRecoveryFaultIT extends InstanceFaults {
    @Test
    void afterAKillNineTheRestartUnderTheSameInstanceIdProcessesEveryAckedRowWithinTenSecondsOfBeingReady()
            throws Exception {
        InboxProcess consumer = instance("inbox-1").start();
        // every reconcile stays in flight: the instance holds the rows it claimed when it is killed
        metakit.hold((client, account) -> true);
        load = new SignedLoad(consumer.webhookUri(), RunningInbox.SECRET, 4, 25, ACCOUNTS).start();
        await().atMost(Duration.ofSeconds(20)).until(() ->
                load.count(SignedLoad.Sent::acked) >= 100 && !heldBy("inbox-1").isEmpty());

        consumer.kill();
        Set<String> held = heldBy("inbox-1");
        metakit.release();
        consumer.start();
        long readyAt = System.nanoTime();
        Set<String> storedAtReady = TestDatabase.strings(TestDatabase.dataSource(),
                "select delivery_key from webhook_inbox");
        long recoveryMillis = millisUntilProcessed(storedAtReady, readyAt);

        List<SignedLoad.Sent> sent = load.stop();
        Set<String> acked = SignedLoad.ackedKeys(sent);
        assertThat(storedAtReady).as("every row held by the dead boot").containsAll(held);
        assertEveryAckedRowProcessedByTheHolderOfItsClaim(acked);
        System.out.printf("FAULT recovery kill-9 restart: acked=%d, %d rows held by the killed boot, all %d rows"
                        + " stored at ready processed %d ms after the restarted instance was ready%n",
                acked.size(), held.size(), storedAtReady.size(), recoveryMillis);
    }

    @Test
    void afterAKillNineOfOneOfTwoInstancesTheSurvivorProcessesTheRowsTheDeadOneHadClaimedWithinTenSeconds()
            throws Exception {
        InboxProcess victim = instance("inbox-a");
        InboxProcess survivor = instance("inbox-b");
        startAll();
        metakit.hold((client, account) -> true);
        // deliveries reach the survivor; the victim claims from the shared inbox on its poll
        load = new SignedLoad(survivor.webhookUri(), RunningInbox.SECRET, 4, 25, ACCOUNTS).start();
        await().atMost(Duration.ofSeconds(20)).until(() -> !heldBy("inbox-a").isEmpty());

        victim.kill();
        long killedAt = System.nanoTime();
        Set<String> orphans = heldBy("inbox-a");
        metakit.release();
        long takeoverMillis = millisUntilProcessed(orphans, killedAt);

        Set<String> acked = SignedLoad.ackedKeys(load.stop());
        assertThat(orphans).isNotEmpty();
        assertThat(processedBy(orphans)).as("who processed the dead instance's rows").containsOnlyKeys("inbox-b");
        assertEveryAckedRowProcessedByTheHolderOfItsClaim(acked);
        System.out.printf("FAULT recovery kill-9 one of two: %d rows held by the killed instance, processed by the"
                + " survivor %d ms after the kill%n", orphans.size(), takeoverMillis);
    }
}
