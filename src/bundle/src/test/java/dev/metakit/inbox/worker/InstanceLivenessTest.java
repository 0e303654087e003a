package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InstanceLiveness;
import dev.metakit.inbox.metakit.MetaKitApiException;
import dev.metakit.inbox.support.OneConnection;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;

import static dev.metakit.inbox.support.TestDatabase.exec;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Claims belong to a live boot: a restarted instance takes its earlier boot's claims back at once, a dead instance's
 * claims are taken over within seconds (not after the 120 s lease), and a boot whose claims were taken over while it
 * was paused writes no outcome for them. Worker instances on the test database, no CamelContext; a dead or earlier
 * boot is a row of inbox_instances whose heartbeat stopped, with the rows it had claimed.
 */
class InstanceLivenessTest {
    @RegisterExtension
    final TestWorkers workers = new TestWorkers();

    /** The dead boots here were silent for up to 10 s: a server that started since counts them alive. */
    @BeforeAll
    static void databaseUpLongerThanTheSilences() {
        TestDatabase.upLongerThan(Duration.ofSeconds(10));
    }

    @BeforeEach
    void clean() throws Exception {
        TestDatabase.truncateAll();
        exec("delete from inbox_instances");
    }

    @Test
    void aRestartedInstanceTakesTheClaimsOfItsEarlierBootBackAtOnce() throws Exception {
        // node-r crashed 3 s ago (a restart takes at least that) holding two rows under the default 120 s lease
        UUID earlier = deadBoot("node-r", 3);
        claimedRow("r-1", 1, earlier);
        claimedRow("r-2", 2, earlier);
        InboxWorker other = worker("node-x", w -> { });
        assertThat(other.claim()).as("another instance: node-r's boot is not dead yet (5 s)").isEmpty();

        long restarted = System.nanoTime();
        InboxWorker restart = worker("node-r", w -> { });
        List<AccountWork> taken = restart.claim();
        Duration took = Duration.ofNanos(System.nanoTime() - restarted);
        System.out.printf("FAULT restart-takeover (in-JVM): earlier boot's 2 rows claimed %d ms after the restart's"
                + " first claim began%n", took.toMillis());

        assertThat(taken).flatExtracting(ClaimedRows::deliveryKeys).containsExactlyInAnyOrder("r-1", "r-2");
        assertThat(scalar("select count(*) from webhook_inbox where attempts = 2 and claim_token = '"
                + restart.claimant().bootToken() + "'")).isEqualTo(2);
        assertThat(scalar("select count(*) from inbox_instances where boot_token = '" + earlier + "'")).isZero();
    }

    @Test
    void aDeadInstancesClaimsAreTakenOverWithinSecondsNotAfterTheLease() throws Exception {
        // node-d beat just now and died, holding rows under the default 120 s lease
        UUID dead = deadBoot("node-d", 0);
        claimedRow("d-1", 1, dead);
        claimedRow("d-2", 1, dead);
        claimedRow("d-3", 2, dead);
        InboxWorker survivor = worker("node-s", w -> { });
        long diedAt = System.nanoTime();
        List<String> taken = new ArrayList<>();
        // the survivor's poll: a claim every second (the default poll interval)
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofSeconds(1)).until(() -> {
            survivor.claim().forEach(w -> w.keys().forEach(k -> taken.add(k.deliveryKey())));
            return taken.size() == 3;
        });
        Duration took = Duration.ofNanos(System.nanoTime() - diedAt);
        System.out.printf("FAULT dead-instance takeover (in-JVM): 3 rows taken over %d ms after the dead boot's last"
                + " beat%n", took.toMillis());
        assertThat(took).as("not before the boot counts as dead (5 s)").isGreaterThan(Duration.ofSeconds(4));
        assertThat(taken).containsExactlyInAnyOrder("d-1", "d-2", "d-3");
    }

    @Test
    void aPausedBootWhoseClaimsWereTakenOverWritesNoOutcomeForThem() throws Exception {
        insertRow("p-1", 1);
        insertRow("p-2", 1);
        insertRow("p-3", 2);
        // heartbeat-millis of an hour: this boot stands for a paused process (SIGSTOP, a long GC), whose beats stop
        InboxWorker paused = worker("node-p", w -> w.setHeartbeatMillis(3_600_000));
        List<AccountWork> work = paused.claim();
        assertThat(work).hasSize(2);
        exec("update inbox_instances set heartbeat_at = now() - interval '10 seconds' where boot_token = '"
                + paused.claimant().bootToken() + "'");
        InboxWorker survivor = worker("node-q", w -> { });
        List<AccountWork> takenOver = survivor.claim();
        assertThat(takenOver).flatExtracting(ClaimedRows::deliveryKeys).containsExactlyInAnyOrder("p-1", "p-2", "p-3");

        // the paused boot resumes: it renews, completes account 1, fails account 2
        paused.renewLeases();
        paused.completed(work.stream().filter(w -> w.accountId() == 1).findFirst().orElseThrow());
        paused.failed(work.stream().filter(w -> w.accountId() == 2).findFirst().orElseThrow(),
                new MetaKitApiException(500, null, "MetaKit API 500"));

        assertThat(paused.fencedCount()).as("row writes refused: renewal, processed, backoff").isEqualTo(3 + 2 + 1);
        assertThat(scalar("select count(*) from webhook_inbox where processed_at is null and failed_at is null"
                + " and last_error is null and claim_token = '" + survivor.claimant().bootToken() + "'"))
                .as("still the survivor's, untouched").isEqualTo(3);
        assertThat(scalar("select count(*) from inbox_account_backoff")).as("no backoff from the paused boot")
                .isZero();

        takenOver.forEach(survivor::completed);
        assertThat(scalar("select count(*) from webhook_inbox where processed_at is not null")).isEqualTo(3);
        assertThat(survivor.fencedCount()).isZero();
    }

    @Test
    void theHeartbeatGivesAHostsConnectionBackAsItWasLent() throws Exception {
        // a host's pool that resets nothing on return: every borrow is the one connection, as it was left
        try (java.sql.Connection connection = TestDatabase.dataSource().getConnection()) {
            connection.setAutoCommit(false);
            int lentTimeout = connection.getNetworkTimeout();
            InstanceLiveness liveness = new InstanceLiveness(new OneConnection(connection).dataSource(),
                    new Claimant("node-h", UUID.randomUUID()), Duration.ofSeconds(15));
            liveness.beat();
            assertThat(connection.getNetworkTimeout()).as("the beat's own timeout while it beats")
                    .isNotEqualTo(lentTimeout);

            liveness.leave();

            assertThat(connection.getNetworkTimeout()).isEqualTo(lentTimeout);
            assertThat(connection.getAutoCommit()).isFalse();
            connection.rollback();
        }
    }

    @Test
    void everyOutcomeWriteOfTheQueueChecksTheClaimsToken() throws Exception {
        insertRow("q-1", 1);
        InboxClaims queue = new InboxClaims(TestDatabase.dataSource());
        Claimant a = beating("a");
        Claimant b = beating("b");
        assertThat(queue.claim(a, 10, Duration.ofMinutes(2))).hasSize(1);
        assertThat(queue.claim(b, 10, Duration.ofMinutes(2))).as("a beats: its claim holds").isEmpty();
        exec("update inbox_instances set heartbeat_at = now() - interval '10 seconds' where boot_token = '"
                + a.bootToken() + "'");
        List<InboxRow> taken = queue.claim(b, 10, Duration.ofMinutes(2));
        assertThat(taken).as("a stopped beating").hasSize(1);

        List<InboxKey> key = taken.stream().map(InboxRow::inboxKey).toList();
        assertThat(queue.renew(a, key, Duration.ofMinutes(2))).isZero();
        assertThat(queue.markProcessed(a, key)).isZero();
        assertThat(queue.markProcessed(a, 1, key)).isZero();
        assertThat(queue.markFailed(a, key, "x")).isZero();
        assertThat(queue.release(a, key)).isZero();
        assertThat(queue.backOff(a, 1, key, key, "x", Duration.ofMinutes(1), true).retryAt()).isNull();
        assertThat(scalar("select count(*) from inbox_account_backoff")).isZero();
        assertThat(scalar("select count(*) from webhook_inbox where claim_token = '" + b.bootToken()
                + "' and processed_at is null and failed_at is null and last_error is null")).isEqualTo(1);

        assertThat(queue.release(b, key)).as("the holder gives it back").isEqualTo(1);
        assertThat(scalar("select attempts from webhook_inbox")).as("with its attempt").isEqualTo(1);
    }

    private InboxWorker worker(String instanceId, Consumer<InboxWorker> settings) {
        return workers.start(instanceId, settings);
    }

    private static Claimant beating(String id) throws Exception {
        Claimant c = Claimant.newBoot(id);
        new InstanceLiveness(TestDatabase.dataSource(), c, Duration.ofSeconds(2)).beat();
        return c;
    }

    /** A boot of {@code instanceId} whose last beat was {@code secondsAgo}. */
    private static UUID deadBoot(String instanceId, int secondsAgo) throws Exception {
        UUID token = UUID.randomUUID();
        exec("insert into inbox_instances (boot_token, instance_id, started_at, heartbeat_at) values ('" + token
                + "', '" + instanceId + "', now() - interval '1 hour', now() - interval '" + secondsAgo + " seconds')");
        return token;
    }

    private static void claimedRow(String key, long account, UUID by) throws Exception {
        exec("insert into webhook_inbox (delivery_key, event, account_id, body, attempts, claimed_by, claim_token,"
                + " claimed_until) values ('" + key + "', 'position.modified', " + account + ", '" + body(account)
                + "', 1, 'whoever', '" + by + "', now() + interval '120 seconds')");
    }

    private static void insertRow(String key, long account) throws Exception {
        exec("insert into webhook_inbox (delivery_key, event, account_id, body) values ('" + key
                + "', 'position.modified', " + account + ", '" + body(account) + "')");
    }

    private static String body(long account) {
        return "{\"event\":\"position.modified\",\"account_id\":" + account + ",\"data\":{\"ticket\":" + account * 100
                + "}}";
    }
}
