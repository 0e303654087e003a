package dev.metakit.inbox.db;

import dev.metakit.inbox.feed.FeedRetention;
import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxAdmin;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxIntake;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.inbox.InstanceLiveness;
import dev.metakit.inbox.ingest.Delivery;
import dev.metakit.inbox.ingest.InboxUnavailableException;
import dev.metakit.inbox.ingest.InboxWriter;
import dev.metakit.inbox.ops.InboxMaintenance;
import dev.metakit.inbox.ops.InboxRetention;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.metakit.inbox.support.TestDatabase.exec;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static dev.metakit.inbox.support.TestDatabase.strings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The inbox and the feed partitioned by day: the days made ahead, a day past its retention kept while it has rows to
 * work, then dropped with its dead letters moved (and still found by the claims, requeue and the dedupe), an ingest
 * never waiting behind the drop longer than its lock timeout, and an insert with no partition for its time
 * failing loudly. Each test has a database of its own: retention here runs on clocks days ahead, dropping days.
 */
class DayPartitionsTest {
    private static final Claimant WORKER = Claimant.newBoot("worker");
    private DataSource db;
    /** a day that the migration made a partition for, whenever the test runs: tomorrow */
    private LocalDate day;

    @BeforeEach
    void ownDatabase() {
        String url = TestDatabase.createDatabase();
        InboxMigrations.migrate(TestDatabase.on(url, TestDatabase.user(), TestDatabase.password()));
        db = TestDatabase.on(url + (url.contains("?") ? "&" : "?") + "currentSchema=metakit", TestDatabase.user(),
                TestDatabase.password());
        day = DayPartitions.day(Instant.now()).plusDays(1);
    }

    @Test
    void theDaysAreMadeAheadOnceByTwoInstancesAtOnceAndAgainNotAtAll() throws Exception {
        Instant later = Instant.now().plus(20, ChronoUnit.DAYS);
        CountDownLatch go = new CountDownLatch(1);
        Callable<List<String>> instance = () -> {
            go.await();
            return DayPartitions.INBOX.makeAhead(db, later);
        };
        ExecutorService both = Executors.newFixedThreadPool(2);
        List<String> made = new ArrayList<>();
        try {
            List<Future<List<String>>> started = List.of(both.submit(instance), both.submit(instance));
            go.countDown();
            for (Future<List<String>> f : started) {
                made.addAll(f.get());
            }
        } finally {
            both.shutdownNow();
        }
        LocalDate last = DayPartitions.day(later).plusDays(DayPartitions.DAYS_AHEAD);
        assertThat(made).as("each day once, contiguous from the migration's last one").doesNotHaveDuplicates()
                .contains(DayPartitions.INBOX.name(DayPartitions.day(later)), DayPartitions.INBOX.name(last));
        try (Connection c = db.getConnection()) {
            assertThat(DayPartitions.INBOX.firstUncovered(c, DayPartitions.day(Instant.now()).minusDays(30), last))
                    .isEmpty();
        }
        assertThat(DayPartitions.INBOX.makeAhead(db, later)).isEmpty();
    }

    @Test
    void aDayWithPendingRowsWaitsForThemThenIsDroppedWithItsFailedRowsMovedClaimableRequeueableAndDeduped()
            throws Exception {
        // the day's first instant: within a day of now, where a claim looks (InboxClaims), so the end can claim
        Instant signed = day.atStartOfDay().toInstant(ZoneOffset.UTC);
        store("done", signed);
        store("failed", signed);
        exec(db, "update webhook_inbox set processed_at = now() where delivery_key = 'done'");
        exec(db, "update webhook_inbox set failed_at = now(), last_error = 'boom' where delivery_key = 'failed'");
        // a backlog: an API outage's pending rows, which the day keeps until they are processed
        exec(db, "insert into webhook_inbox (delivery_key, account_id, body, signed_at) select 'pending-' || g, g % 50,"
                + " '{}', '" + signed + "' from generate_series(1, 5000) g");
        String partition = DayPartitions.INBOX.name(day);
        assertThat(strings(db, "select tableoid::regclass::text from webhook_inbox")).containsOnly(partition);
        Instant timeUp = day.plusDays(8).atTime(0, 1).toInstant(ZoneOffset.UTC);
        Instant cutoff = timeUp.minus(7, ChronoUnit.DAYS);

        DayPartitions.Retired waiting = DayPartitions.INBOX.retire(db, cutoff, InboxAdmin.UNFINISHED);
        assertThat(waiting.dropped()).as("today's, empty: nothing holds it").doesNotContain(partition);
        assertThat(waiting.waiting()).isEqualTo(partition);
        assertThat(scalar(db, "select count(*) from " + partition)).as("nothing moved, nothing dropped")
                .isEqualTo(5002);
        assertThat(retention(timeUp).prune()).isZero();
        assertThat(strings(db, "select tablename from pg_tables where schemaname = 'metakit'")).contains(partition);

        exec(db, "update webhook_inbox set processed_at = now() where delivery_key like 'pending-%'");
        DayPartitions.Retired retired = DayPartitions.INBOX.retire(db, cutoff, InboxAdmin.UNFINISHED);

        assertThat(retired.dropped()).containsExactly(partition);
        assertThat(retired.rowsMoved()).as("the dead letter only").isOne();
        assertThat(strings(db, "select tablename from pg_tables where schemaname = 'metakit'"))
                .doesNotContain(partition);
        assertThat(strings(db, "select delivery_key from webhook_inbox_leftover")).containsExactly("failed");
        assertThat(strings(db, "select delivery_key from webhook_inbox_kept")).isEmpty();
        assertThat(retention(day.plusDays(8).atTime(0, 2).toInstant(ZoneOffset.UTC)).prune()).as("done once").isZero();
        // a retry of a moved delivery is a duplicate: its signed_at leads it to the leftover partition
        try (Connection c = db.getConnection()) {
            assertThat(insert(c, "failed", signed)).isEmpty();
            assertThat(insert(c, "done", signed)).as("a processed row of a dropped day is gone").contains("done");
        }
        assertThat(new InboxMaintenance(db).requeueFailedRow("failed")).isOne();
        new InstanceLiveness(db, WORKER, Duration.ofSeconds(30)).beat();
        List<InboxRow> claimed = new InboxClaims(db).claim(WORKER, 10, Duration.ofSeconds(30));
        assertThat(claimed).extracting(InboxRow::key).contains("failed", "done");
    }

    @Test
    void theLeftoverPartitionGrowsOverTheNextDayThatLeavesADeadLetterAndADayWithoutOneIsJustDropped()
            throws Exception {
        Instant first = day.atTime(1, 0).toInstant(ZoneOffset.UTC);
        Instant second = first.plus(1, ChronoUnit.DAYS);
        Instant third = first.plus(2, ChronoUnit.DAYS);
        store("failed-1", first);
        store("done-2", second);
        store("failed-3", third);
        exec(db, "update webhook_inbox set failed_at = now() where delivery_key like 'failed-%'");
        exec(db, "update webhook_inbox set processed_at = now() where delivery_key = 'done-2'");

        DayPartitions.Retired retired = DayPartitions.INBOX.retire(db,
                day.plusDays(3).atStartOfDay().toInstant(ZoneOffset.UTC), InboxAdmin.UNFINISHED);

        assertThat(retired.dropped()).contains(DayPartitions.INBOX.name(day),
                DayPartitions.INBOX.name(day.plusDays(1)), DayPartitions.INBOX.name(day.plusDays(2)));
        assertThat(retired.rowsMoved()).isEqualTo(2);
        assertThat(strings(db, "select delivery_key from webhook_inbox_leftover"))
                .containsExactlyInAnyOrder("failed-1", "failed-3");
        try (Connection c = db.getConnection()) {
            DayPartitions.Partition leftover = DayPartitions.INBOX.partitions(c).stream()
                    .filter(p -> p.name().equals("webhook_inbox_leftover")).findFirst().orElseThrow();
            assertThat(leftover.from()).isEqualTo(day.atStartOfDay().toInstant(ZoneOffset.UTC));
            assertThat(leftover.to()).isEqualTo(day.plusDays(3).atStartOfDay().toInstant(ZoneOffset.UTC));
            assertThat(insert(c, "failed-3", third)).as("still a duplicate").isEmpty();
        }
    }

    @Test
    void aDayAnOperatorDetachedIsKeptWhileADayRetirementDetachedAndDidNotDropIsDroppedAtItsNextRun()
            throws Exception {
        Instant first = day.atTime(1, 0).toInstant(ZoneOffset.UTC);
        store("archived-1", first);
        store("pending-2", first.plus(1, ChronoUnit.DAYS));
        exec(db, "update webhook_inbox set processed_at = now() where delivery_key = 'archived-1'");
        // the operator takes the first day out of the table to archive it, under its own name
        String archived = DayPartitions.INBOX.name(day);
        exec(db, "alter table webhook_inbox detach partition " + archived);
        // a day retirement detached, its drop cut short by a stop
        String cutShort = DayPartitions.INBOX.name(day.minusDays(30));
        exec(db, "create table " + cutShort + " (like webhook_inbox)");
        exec(db, "comment on table " + cutShort + " is '" + DayPartitions.RETIRED + "'");

        DayPartitions.INBOX.retire(db, day.plusDays(3).atStartOfDay().toInstant(ZoneOffset.UTC),
                InboxAdmin.UNFINISHED);

        assertThat(strings(db, "select delivery_key from " + archived)).as("the operator's archive, rows and all")
                .containsExactly("archived-1");
        assertThat(strings(db, "select relname::text from pg_class where relname = '" + cutShort + "'"))
                .as("the day retirement detached").isEmpty();
        assertThat(strings(db, "select delivery_key from webhook_inbox")).containsExactly("pending-2");
    }

    @Test
    void anIngestWaitingBehindTheDropWaitsNoLongerThanItsLockTimeout() throws Exception {
        Instant signed = day.atTime(10, 0).toInstant(ZoneOffset.UTC);
        store("done", signed);
        exec(db, "update webhook_inbox set processed_at = now()");
        Instant timeUp = day.plusDays(2).atTime(0, 1).toInstant(ZoneOffset.UTC);
        Instant later = day.plusDays(3).atTime(10, 0).toInstant(ZoneOffset.UTC);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        // a long transaction on the table: the drop cannot have its lock while it runs
        try (Connection longTx = db.getConnection()) {
            longTx.setAutoCommit(false);
            // in a day whose time is not up: its pending row does not hold the day retired here
            assertThat(insert(longTx, "long", later)).containsExactly("long");
            Future<DayPartitions.Retired> retire = threads.submit(
                    () -> DayPartitions.INBOX.retire(db, timeUp, InboxAdmin.UNFINISHED));
            await().atMost(Duration.ofSeconds(30)).until(() -> scalar(db, "select count(*) from pg_locks"
                    + " where not granted and mode = 'AccessExclusiveLock'"
                    + " and database = (select oid from pg_database where datname = current_database())") > 0);
            // an ingest now queues behind the drop's lock request
            Future<Set<String>> ingest = threads.submit(() -> {
                try (Connection c = db.getConnection()) {
                    return insert(c, "queued", later);
                }
            });
            assertThat(ingest.get(30, TimeUnit.SECONDS)).as("stored while the long transaction still runs: the drop"
                    + " gave up its lock request").containsExactly("queued");
            assertThat(retire.get(30, TimeUnit.SECONDS).lockBusy()).isTrue();
            assertThat(strings(db, "select tablename from pg_tables where schemaname = 'metakit'"))
                    .contains(DayPartitions.INBOX.name(day));
            longTx.commit();
        } finally {
            threads.shutdownNow();
        }
        assertThat(DayPartitions.INBOX.retire(db, timeUp, InboxAdmin.UNFINISHED).dropped())
                .as("the next run drops it").contains(DayPartitions.INBOX.name(day));
    }

    @Test
    void aRetryOfADeliveryStoredInADayPartitionIsADuplicate() throws Exception {
        Instant signed = day.atTime(23, 59, 59).toInstant(ZoneOffset.UTC);
        try (Connection c = db.getConnection()) {
            assertThat(insert(c, "1:ab", signed)).containsExactly("1:ab");
            assertThat(insert(c, "1:ab", signed)).isEmpty();
        }
        assertThat(scalar(db, "select count(*) from webhook_inbox")).isOne();
    }

    @Test
    void aFeedDayWaitsForItsUnpublishedChangesInProcessAndNotWhenDebeziumPublishes() throws Exception {
        // the feed's days start the day after the newest change at the migration: tomorrow
        Instant reconciled = day.atTime(12, 0).toInstant(ZoneOffset.UTC);
        change(1, reconciled, true);
        change(2, reconciled, false);
        String partition = DayPartitions.FEED.name(day);
        FeedRetention inProcess = feedRetention(day.plusDays(9).atStartOfDay().toInstant(ZoneOffset.UTC), "in-process");
        inProcess.prune();
        assertThat(strings(db, "select tablename from pg_tables where schemaname = 'metakit'")).contains(partition);
        assertThat(strings(db, "select seq::text from " + partition)).containsExactlyInAnyOrder("1", "2");
        exec(db, "update position_changes set published_at = now()");
        inProcess.prune();
        assertThat(strings(db, "select tablename from pg_tables where schemaname = 'metakit'"))
                .doesNotContain(partition);

        // Debezium read every change from the WAL: retention drops a day whole, and prunes the kept ones too
        Instant next = reconciled.plus(3, ChronoUnit.DAYS);
        change(3, next, false);
        feedRetention(next.plus(8, ChronoUnit.DAYS), "external").prune();
        assertThat(strings(db, "select seq::text from position_changes")).isEmpty();
    }

    @Test
    void aDeliveryWithNoPartitionForItsTimeIsNotStoredAndReadinessNamesTheDay() throws Exception {
        LocalDate today = DayPartitions.day(Instant.now());
        for (LocalDate d = today; !d.isAfter(today.plusDays(DayPartitions.DAYS_AHEAD + 1)); d = d.plusDays(1)) {
            exec(db, "drop table if exists " + DayPartitions.INBOX.name(d));
        }
        try (InboxWriter writer = new InboxWriter(db, 2000, 16, 1)) {
            Delivery delivery = new Delivery("1:cd", "position.opened", 1L, "{}".getBytes(StandardCharsets.UTF_8),
                    Instant.now());
            assertThatThrownBy(() -> writer.store(delivery, System.nanoTime()))
                    .isInstanceOf(InboxUnavailableException.class).hasMessageContaining("no partition");
        }
        assertThat(scalar(db, "select count(*) from webhook_inbox")).isZero();
        InboxDatabaseHealthCheck check = new InboxDatabaseHealthCheck();
        check.setDataSource(db);
        check.setClock(Clock.fixed(Instant.now(), ZoneOffset.UTC));
        DeadlineProbe.Outcome outcome = check.probe();
        assertThat(outcome.up()).isFalse();
        assertThat(outcome.reason()).contains("webhook_inbox has no partition for");

        DayPartitions.INBOX.makeAhead(db, Instant.now());
        assertThat(check.probe().up()).as("the next maintenance run makes the days again").isTrue();
    }

    private InboxRetention retention(Instant now) {
        InboxRetention r = new InboxRetention();
        r.setDataSource(db);
        r.setRetention("P7D");
        r.setBatchSize(1000);
        r.setClock(Clock.fixed(now, ZoneOffset.UTC));
        return r;
    }

    private FeedRetention feedRetention(Instant now, String publisher) {
        FeedRetention r = new FeedRetention();
        r.setDataSource(db);
        r.setRetention("P7D");
        r.setBatchSize(1000);
        r.setPublisher(publisher);
        r.setClock(Clock.fixed(now, ZoneOffset.UTC));
        return r;
    }

    private void store(String key, Instant signed) throws SQLException {
        try (Connection c = db.getConnection()) {
            assertThat(insert(c, key, signed)).containsExactly(key);
        }
    }

    private static Set<String> insert(Connection c, String key, Instant signed) throws SQLException {
        return InboxIntake.insert(c, 5000, new String[]{key}, new String[]{"position.opened"}, new Long[]{7L},
                new String[]{"{}"}, new byte[][]{null}, new Long[]{signed.getEpochSecond()}, new String[]{null});
    }

    private void change(long seq, Instant reconciled, boolean published) {
        exec(db, "insert into position_changes (account_id, seq, ticket, kind, status, changed, source, reconciled_at,"
                + " published_at) values (7, " + seq + ", 70, 'opened', 'open', '{volume}', 'event', '" + reconciled
                + "', " + (published ? "'" + reconciled + "'" : "null") + ")");
    }
}
