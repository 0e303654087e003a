package dev.metakit.inbox.feed;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InstanceLiveness;
import dev.metakit.inbox.support.ShippedProperties;
import dev.metakit.inbox.support.ShippedWorker;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.worker.InboxWorker;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.builder.RouteBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The publisher against a recording outlet route, on the real database. */
class ChangePublisherTest {

    private final DataSource db = TestDatabase.dataSource();
    private final ObjectMapper json = new ObjectMapper();
    private final List<CamelContext> contexts = new ArrayList<>();
    private final List<ChangePublisher> publishers = new ArrayList<>();
    private final List<InboxWorker> workers = new ArrayList<>();
    /** what the outlet took, in the order it took it */
    private final List<Map<String, Object>> received = Collections.synchronizedList(new ArrayList<>());
    private final Map<Long, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    private final AtomicInteger mostInFlightForOneAccount = new AtomicInteger();
    private final AtomicInteger inFlightAccounts = new AtomicInteger();
    private final AtomicInteger mostAccountsInFlight = new AtomicInteger();
    private volatile Predicate<String> refuse = id -> false;
    private volatile long sendMillis;

    /** Boots made silent here (heartbeat set 10 s back) count as dead only on a server up longer than that. */
    @BeforeAll
    static void databaseUpLongerThanTheSilences() {
        TestDatabase.upLongerThan(Duration.ofSeconds(10));
    }

    @BeforeEach
    void cleanSlate() {
        TestDatabase.truncateAll();
    }

    @AfterEach
    void stop() throws Exception {
        for (ChangePublisher p : publishers) {
            p.stop();
        }
        workers.forEach(InboxWorker::stop);
        for (CamelContext c : contexts) {
            c.stop();
        }
    }

    @Test
    void everyChangeGoesOutInSeqOrderWithItsHeadersAndJsonAndIsMarkedPublished() throws Exception {
        insertChanges(7, 1, 3);
        insertChanges(8, 1, 2);
        ChangePublisher publisher = publisher(2);

        publishUntil(publisher, () -> received.size() == 5);

        assertThat(ids(7)).containsExactly("7:1", "7:2", "7:3");
        assertThat(ids(8)).containsExactly("8:1", "8:2");
        Map<String, Object> first = received.stream().filter(m -> "7:1".equals(m.get("MetaKitChangeId"))).findFirst()
                .orElseThrow();
        assertThat(first.get("MetaKitAccountId")).isEqualTo(7L);
        assertThat(first.get("MetaKitTicket")).isEqualTo(1001L);
        assertThat(first.get("MetaKitChangeKind")).isEqualTo("opened");
        JsonNode body = json.readTree((String) first.get("body"));
        assertThat(body.get("id").asText()).isEqualTo("7:1");
        assertThat(body.get("seq").asLong()).isEqualTo(1);
        assertThat(body.get("kind").asText()).isEqualTo("opened");
        assertThat(body.get("position").get("symbol").asText()).isEqualTo("EURUSD");
        assertThat(body.get("position").get("volume").decimalValue()).isEqualByComparingTo("0.10");
        assertThat(body.get("changed").get(0).asText()).isEqualTo("status");
        assertThat(TestDatabase.scalar("select count(*) from position_changes where published_at is null")).isZero();
        assertThat(publisher.publishedCount()).isEqualTo(5);
    }

    @Test
    void aFailingOutletBacksTheAccountOffAndNeverSkipsAChange() throws Exception {
        insertChanges(7, 1, 4);
        AtomicInteger refusals = new AtomicInteger();
        refuse = id -> id.equals("7:2") && refusals.incrementAndGet() <= 3;
        ChangePublisher publisher = publisher(1);

        long started = System.nanoTime();
        publishUntil(publisher, () -> ids(7).contains("7:4"));
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        // each refusal stopped the account at 7:2; nothing after it went out before it was taken
        assertThat(ids(7)).containsExactly("7:1", "7:2", "7:2", "7:2", "7:2", "7:3", "7:4");
        assertThat(publisher.failureCount()).isEqualTo(3);
        // the first failure is tried again at once, then backoff of 100, 200 ms (this test's base): not three
        // immediate retries
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(TestDatabase.scalar("select count(*) from position_changes where published_at is null")).isZero();
    }

    @Test
    void aRefusedChangeStaysUnpublishedAndItsSuccessorsUnsent() throws Exception {
        insertChanges(7, 1, 3);
        refuse = id -> id.equals("7:2");
        ChangePublisher publisher = publisher(1);

        publishUntil(publisher, () -> publisher.failureCount() >= 2);

        assertThat(ids(7)).doesNotContain("7:3").startsWith("7:1");
        assertThat(TestDatabase.scalar("select count(*) from position_changes where published_at is null")).isEqualTo(2);
    }

    @Test
    void anAccountsRefusalHoldsBackThatAccountAloneNotTheOthersPublishedBesideIt() throws Exception {
        insertChanges(7, 1, 3);
        insertChanges(8, 1, 3);
        refuse = id -> id.equals("7:2");
        // one thread: the two accounts' turns are taken in the same rounds, or one after the other
        ChangePublisher publisher = publisher(1);

        publishUntil(publisher, () -> ids(8).size() == 3 && publisher.failureCount() >= 2);

        assertThat(ids(8)).containsExactly("8:1", "8:2", "8:3");
        assertThat(ids(7)).startsWith("7:1", "7:2").doesNotContain("7:3");
        assertThat(TestDatabase.scalar("select count(*) from position_changes where published_at is null"
                + " and account_id = 8")).isZero();
        assertThat(TestDatabase.scalar("select count(*) from position_changes where published_at is null"
                + " and account_id = 7")).as("7:2 and 7:3").isEqualTo(2);
    }

    @Test
    void twoInstancesNeverPublishOneAccountAtOnceAndKeepItsOrder() throws Exception {
        for (long account = 1; account <= 6; account++) {
            insertChanges(account, 1, 15);
        }
        sendMillis = 3;
        ChangePublisher a = publisher(3);
        ChangePublisher b = publisher(3);

        await().atMost(Duration.ofSeconds(60)).until(() -> {
            a.publishDue();
            b.publishDue();
            return TestDatabase.scalar("select count(*) from position_changes where published_at is null") == 0;
        });

        assertThat(mostInFlightForOneAccount.get()).isEqualTo(1);
        for (long account = 1; account <= 6; account++) {
            long acc = account;
            assertThat(ids(account)).containsExactlyElementsOf(
                    LongStream.rangeClosed(1, 15).mapToObj(s -> acc + ":" + s).toList());
        }
        assertThat(a.publishedCount() + b.publishedCount()).isEqualTo(90);
    }

    @Test
    void accountsSendSideBySideOnAnOutletThatAnswersOnTheSendingThreadEachInSeqOrder() throws Exception {
        for (long account = 1; account <= 4; account++) {
            insertChanges(account, 1, 20);
        }
        sendMillis = 20; // an outlet answering on the sending thread, as HTTP does, and not at once
        ChangePublisher publisher = publisher(4);

        publishUntil(publisher, () ->
                TestDatabase.scalar("select count(*) from position_changes where published_at is null") == 0);

        assertThat(mostAccountsInFlight.get()).as("accounts with a send under way at once").isGreaterThan(1);
        assertThat(mostInFlightForOneAccount.get()).isEqualTo(1);
        for (long account = 1; account <= 4; account++) {
            long acc = account;
            assertThat(ids(account)).containsExactlyElementsOf(
                    LongStream.rangeClosed(1, 20).mapToObj(s -> acc + ":" + s).toList());
        }
    }

    @Test
    void aChangeOfAnotherAccountWaitsForAStepOfABacklogNotForAllOfIt() throws Exception {
        insertChanges(7, 1, 300);
        sendMillis = 10; // 300 sends: seconds of backlog, against the step's 250 ms
        // one round and one sender (the default is 4 of each), so that only the end of a step lets account 8 in
        ChangePublisher publisher = publisher(1);
        publishUntil(publisher, () -> !ids(7).isEmpty());

        insertChanges(8, 1, 1);
        publishUntil(publisher, () -> ids(8).size() == 1);

        assertThat(ids(7)).as("account 7's backlog when account 8's change went out").hasSizeLessThan(300);
        publishUntil(publisher, () ->
                TestDatabase.scalar("select count(*) from position_changes where published_at is null") == 0);
        assertThat(ids(7)).containsExactlyElementsOf(LongStream.rangeClosed(1, 300).mapToObj(s -> "7:" + s).toList());
    }

    @Test
    void anAccountOwnedByAnotherLiveInstanceIsLeftToItAndTakenOverOnceItsHeartbeatIsStale() throws Exception {
        insertChanges(7, 1, 2);
        insertChanges(8, 1, 1);
        ChangePublisher publisher = publisher(1);
        Claimant other = Claimant.newBoot("other");
        new InstanceLiveness(db, other, Duration.ofSeconds(2)).beat();
        try (Connection c = db.getConnection()) {
            assertThat(new FeedOwnership(other, Duration.ofSeconds(5)).take(c, 7)).isNotNull();
        }

        publishUntil(publisher, () -> ids(8).size() == 1);
        publisher.publishDue();
        assertThat(ids(7)).as("owned by a live boot").isEmpty();

        // the other boot stops beating (a crash, a pause): its account is published here within dead-after
        TestDatabase.exec("update inbox_instances set heartbeat_at = now() - interval '10 seconds' where boot_token = '"
                + other.bootToken() + "'");
        publishUntil(publisher, () -> ids(7).size() == 2);
        assertThat(ids(7)).containsExactly("7:1", "7:2");
        assertThat(TestDatabase.scalar("select epoch from feed_owners where account_id = 7")).isEqualTo(2);
    }

    @Test
    void aPublisherThatStoodStillPastItsLeaseSendsNothingMoreOfAnAccountTakenOverMeanwhile() throws Exception {
        insertChanges(7, 1, 3);
        // heartbeat-millis of an hour: this publisher's boot stands for a paused process, whose beats stop
        ChangePublisher paused = publisher(1, w -> w.setHeartbeatMillis(3_600_000));
        // batches of one change (the default is 500): the freeze lands between two batches, at the lease check
        // before 7:2's; a freeze inside a batch is aPublisherFrozenInsideABatch... below
        paused.setBatchSize(1);
        Claimant other = Claimant.newBoot("other");
        // the freeze lands after 7:1 went out and was marked, before the lease check of 7:2: meanwhile the boot's
        // heartbeat goes stale, another boot takes the account over, and 30 s pass on this process's clock
        AtomicBoolean froze = freezeOnceSent(paused, "7:1", other, 7);
        publishUntil(paused, froze::get);
        paused.stop(); // waits for the drain under way: whatever it sends after the freeze has been sent by now

        assertThat(ids(7)).as("nothing after the freeze").containsExactly("7:1");
        assertThat(paused.fencedCount()).as("nothing sent, so nothing to fence").isZero();
        assertThat(TestDatabase.scalar("select epoch from feed_owners where account_id = 7")).isEqualTo(2);
        assertThat(TestDatabase.scalar("select count(*) from position_changes where published_at is null"))
                .as("7:1 marked, 7:2 and 7:3 left to the new owner").isEqualTo(2);
    }

    @Test
    void aPublisherFrozenInsideABatchSendsNothingMoreAndMarksNothingOfAnAccountTakenOverMeanwhile() throws Exception {
        insertChanges(7, 1, 3);
        ChangePublisher paused = publisher(1, w -> w.setHeartbeatMillis(3_600_000));
        Claimant other = Claimant.newBoot("other");
        // at the default batch size all three are one batch: the freeze lands after 7:1 went out, before 7:2 is
        // handed over, so 7:1 is sent but not yet marked when the account changes hands
        AtomicBoolean froze = freezeOnceSent(paused, "7:1", other, 7);

        publishUntil(paused, froze::get);
        paused.stop();

        assertThat(ids(7)).as("nothing handed over after the freeze").containsExactly("7:1");
        assertThat(paused.fencedCount()).as("7:1 went out under the old epoch: its mark refused").isEqualTo(1);
        assertThat(TestDatabase.scalar("select count(*) from position_changes where published_at is null"))
                .as("all three left to the new owner, 7:1 to be sent again with its id").isEqualTo(3);
    }

    @Test
    void aStopGivesTheInstancesAccountsUpForTheOthersAtOnce() throws Exception {
        insertChanges(7, 1, 1);
        ChangePublisher publisher = publisher(1);
        publishUntil(publisher, () -> ids(7).size() == 1);
        assertThat(TestDatabase.scalar("select count(*) from feed_owners")).isEqualTo(1);

        publisher.stop();

        assertThat(TestDatabase.scalar("select count(*) from feed_owners")).isZero();
    }

    @Test
    void replayFromASeqSendsThoseChangesAgainInOrder() throws Exception {
        insertChanges(7, 1, 4);
        ChangePublisher publisher = publisher(1);
        publishUntil(publisher, () -> received.size() == 4);

        try (Connection c = db.getConnection()) {
            assertThat(ChangeStore.replayFrom(c, 7, 3)).isEqualTo(2);
        }
        publishUntil(publisher, () -> received.size() == 6);

        assertThat(ids(7)).containsExactly("7:1", "7:2", "7:3", "7:4", "7:3", "7:4");
    }

    // ---- helpers

    /**
     * Makes {@code paused} stand still once {@code sentId} reached the outlet, at its next read of its clock: its boot's
     * heartbeat goes stale, {@code other} (beating) takes {@code account} over, and 30 s pass on the paused clock.
     */
    private AtomicBoolean freezeOnceSent(ChangePublisher paused, String sentId, Claimant other, long account)
            throws SQLException {
        new InstanceLiveness(db, other, Duration.ofSeconds(2)).beat();
        AtomicLong pausedFor = new AtomicLong();
        AtomicBoolean froze = new AtomicBoolean();
        paused.nanoClock(() -> {
            if (ids(account).contains(sentId) && froze.compareAndSet(false, true)) {
                TestDatabase.exec("update inbox_instances set heartbeat_at = now() - interval '10 seconds'"
                        + " where boot_token <> '" + other.bootToken() + "'");
                try (Connection c = db.getConnection()) {
                    assertThat(new FeedOwnership(other, Duration.ofSeconds(5)).take(c, account)).isNotNull();
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
                pausedFor.set(Duration.ofSeconds(30).toNanos());
            }
            return System.nanoTime() + pausedFor.get();
        });
        return froze;
    }

    private ChangePublisher publisher(int concurrency) throws Exception {
        return publisher(concurrency, w -> { });
    }

    private ChangePublisher publisher(int concurrency, Consumer<InboxWorker> workerSettings) throws Exception {
        CamelContext context = ShippedProperties.camelContext(new RouteBuilder() {
            @Override
            public void configure() {
                errorHandler(noErrorHandler());
                from(ChangePublisher.DEFAULT_OUTLET).process(ChangePublisherTest.this::outlet);
            }
        });
        context.start();
        contexts.add(context);
        // each publisher an instance of its own: its boot's heartbeat holds its accounts
        InboxWorker worker = ShippedWorker.create("feed-test-" + (workers.size() + 1));
        workerSettings.accept(worker);
        worker.start();
        workers.add(worker);
        ChangePublisher p = new ChangePublisher();
        p.setCamelContext(context);
        p.setDataSource(db);
        p.setHeartbeat(worker);
        p.setConcurrency(concurrency);
        // a short backoff so the test takes seconds; the backoff's doubling is what aFailingOutlet... checks
        p.setBackoffBaseMillis(100);
        p.setBackoffMaxMillis(1000);
        p.start(); // as the context would start it: its stop() then gives back its threads and LISTEN connection
        publishers.add(p);
        return p;
    }

    private void outlet(Exchange e) throws Exception {
        var m = e.getMessage();
        long account = m.getHeader("MetaKitAccountId", Long.class);
        AtomicInteger n = inFlight.computeIfAbsent(account, a -> new AtomicInteger());
        mostInFlightForOneAccount.accumulateAndGet(n.incrementAndGet(), Math::max);
        mostAccountsInFlight.accumulateAndGet(inFlightAccounts.incrementAndGet(), Math::max);
        try {
            if (sendMillis > 0) {
                Thread.sleep(sendMillis); // a slow outlet: widens the window in which a second send would overlap
            }
            Map<String, Object> copy = new LinkedHashMap<>(m.getHeaders());
            copy.put("body", m.getBody(String.class));
            received.add(copy);
            if (refuse.test(m.getHeader("MetaKitChangeId", String.class))) {
                throw new IllegalStateException("outlet refused");
            }
        } finally {
            inFlightAccounts.decrementAndGet();
            n.decrementAndGet();
        }
    }

    private void publishUntil(ChangePublisher p, java.util.concurrent.Callable<Boolean> done) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> {
            p.publishDue();
            return done.call();
        });
    }

    private List<String> ids(long account) {
        synchronized (received) {
            return received.stream().filter(m -> Long.valueOf(account).equals(m.get("MetaKitAccountId")))
                    .map(m -> (String) m.get("MetaKitChangeId")).toList();
        }
    }

    private void insertChanges(long account, long fromSeq, long toSeq) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement(
                "insert into position_changes (account_id, seq, ticket, kind, status, symbol, type, volume,"
                        + " price_open, changed, source) values (?, ?, ?, ?, 'open', 'EURUSD', 'buy', 0.10, 1.1,"
                        + " array['status','symbol'], 'event')")) {
            for (long seq = fromSeq; seq <= toSeq; seq++) {
                s.setLong(1, account);
                s.setLong(2, seq);
                s.setLong(3, 1000 + seq);
                s.setString(4, seq == 1 ? "opened" : "modified");
                s.executeUpdate();
            }
        }
    }
}
