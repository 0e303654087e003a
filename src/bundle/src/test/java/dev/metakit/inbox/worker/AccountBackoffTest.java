package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.StoredKeys;
import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.inbox.InstanceLiveness;
import dev.metakit.inbox.metakit.MetaKitApiException;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static dev.metakit.inbox.support.TestEvents.event;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A failed reconcile backs its account off: one row of state holds every pending row of the account back until one
 * retry time, rows that arrive meanwhile wait with them without being written or read by a claim, the retry claims
 * one row (the account's probe) until a reconcile commits, and a row is failed only on its own attempts. The
 * worker's logic on the test database (no CamelContext), then the bundle against an API that answers 500.
 */
class AccountBackoffTest {
    private static final MetaKitApiException HTTP_500 = new MetaKitApiException(500, null, "MetaKit API 500");

    @RegisterExtension
    final TestWorkers workers = new TestWorkers();

    @Test
    void aFailedReconcileWritesTheAccountsOneRowAndGivesTheClaimedRowsBackWithoutTouchingItsOtherRows()
            throws Exception {
        for (int i = 0; i < 5; i++) {
            insert("a1-" + i, 1, 100 - i);
        }
        insert("a2-0", 2, 50);
        // a batch of 1 account capped at 3 rows: the claim takes account 1's three oldest rows, and neither its other
        // two nor account 2
        InboxWorker worker = worker(w -> {
            w.setBatchSize(1);
            w.setClaimMaxRows(3);
            fixedBackoff(w, 60_000);
        });
        AccountWork work = single(worker.claim());
        assertThat(work.keys()).extracting(InboxKey::deliveryKey).containsExactlyInAnyOrder("a1-0", "a1-1", "a1-2");
        insert("a1-late", 1, 0);
        String untouched = "select string_agg(delivery_key || '@' || xmin, ',' order by delivery_key)"
                + " from webhook_inbox where delivery_key in ('a1-3', 'a1-4', 'a1-late', 'a2-0')";
        String before = TestDatabase.text(untouched);

        Instant failedFrom = TestDatabase.clock();
        worker.failed(work, HTTP_500);
        Instant failedBy = TestDatabase.clock();

        assertThat(scalar("select count(*) from inbox_account_backoff where account_id = 1 and failures = 1"
                + " and last_error = 'MetaKit API 500'")).as("the account's one row: its failure and error")
                .isEqualTo(1);
        assertThat(TestDatabase.instant("select retry_at from inbox_account_backoff where account_id = 1"))
                .as("its retry time, 60 s after the failure")
                .isBetween(failedFrom.plusSeconds(60), failedBy.plusSeconds(60));
        assertThat(scalar("select count(*) from webhook_inbox where account_id = 1 and attempts = 1"
                + " and last_error = 'MetaKit API 500' and claimed_by is null")).as("the claimed rows").isEqualTo(3);
        assertThat(TestDatabase.text(untouched)).as("the account's rows the claim did not take, and another"
                + " account's, not written (the same row versions)").isEqualTo(before);

        assertThat(worker.claim()).extracting(AccountWork::accountId).containsExactly(2L);
    }

    @Test
    void rowsArrivingDuringTheBackoffWaitForItItsRetryProbesWithOneRowAndTheRestFollowItsReconcile()
            throws Exception {
        for (int i = 0; i < 3; i++) {
            insert("a1-" + i, 1, 100 - i);
        }
        InboxWorker worker = worker(w -> {
            fixedBackoff(w, 2_000);
        });
        AccountWork tried = single(worker.claim());
        Instant failedFrom = TestDatabase.clock();
        worker.failed(tried, HTTP_500);
        Instant failedBy = TestDatabase.clock();
        assertThat(TestDatabase.instant("select min(next_attempt_at) from webhook_inbox where delivery_key like 'a1-_'"))
                .as("the tried rows put back at their failure").isBetween(failedFrom, failedBy);
        // due by its own next_attempt_at, and the oldest row in the inbox: the account's retry time holds it back
        insert("a1-new", 1, 1_000);
        insert("a2-new", 2, 0);

        assertThat(worker.claim()).extracting(AccountWork::accountId).containsExactly(2L);
        assertThat(scalar("select attempts from webhook_inbox where delivery_key = 'a1-new'")).isZero();

        AtomicReference<List<AccountWork>> retry = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).until(() -> {
            retry.set(worker.claim());
            return !retry.get().isEmpty();
        });
        AccountWork probe = single(retry.get());
        assertThat(probe.accountId()).isEqualTo(1L);
        assertThat(probe.rows()).as("the retry's probe: the account's first due row, not yet tried")
                .extracting(InboxRow::key, InboxRow::attempts, InboxRow::accountFailures)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("a1-new", 1, 1));
        // not a second claim of this worker (it leaves out the account it is working anyway): the rows themselves
        assertThat(scalar("select count(*) from webhook_inbox where delivery_key like 'a1-_' and claim_token is not null"))
                .as("the rest wait for the probe's reconcile, unclaimed").isZero();

        worker.completed(probe);
        assertThat(scalar("select count(*) from inbox_account_backoff")).as("the backoff ended with it").isZero();
        AccountWork rest = single(worker.claim());
        assertThat(rest.rows()).extracting(InboxRow::key, InboxRow::attempts).containsExactlyInAnyOrder(
                org.assertj.core.groups.Tuple.tuple("a1-0", 2), org.assertj.core.groups.Tuple.tuple("a1-1", 2),
                org.assertj.core.groups.Tuple.tuple("a1-2", 2));
        worker.completed(rest);
        assertThat(scalar("select count(*) from webhook_inbox where account_id = 1 and processed_at is null")).isZero();
    }

    @Test
    void aRetryThatFailsAgainWritesItsProbeRowAndTheAccountsAndTheNextRetryProbesAnotherRow() throws Exception {
        ClaimedRows.tradeRows("a1-", 1, 20, 100);
        // a claim of one account capped at 2 rows: the first takes two of the twenty
        InboxWorker worker = worker(w -> {
            w.setBatchSize(1);
            w.setClaimMaxRows(2);
            fixedBackoff(w, 200);
        });
        worker.failed(single(worker.claim()), HTTP_500);
        String others = "select string_agg(delivery_key || '@' || xmin, ',' order by delivery_key)"
                + " from webhook_inbox where attempts = 0";
        List<String> probed = new ArrayList<>();
        for (int retry = 1; retry <= 3; retry++) {
            AtomicReference<List<AccountWork>> claimed = new AtomicReference<>();
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
                claimed.set(worker.claim());
                return !claimed.get().isEmpty();
            });
            AccountWork probe = single(claimed.get());
            assertThat(probe.rows()).as("retry %d: one row", retry).hasSize(1);
            assertThat(probe.accountFailures()).as("the account's streak when claimed").isEqualTo(retry);
            probed.add(probe.rows().get(0).key());
            String before = TestDatabase.text(others);
            worker.failed(probe, HTTP_500);
            assertThat(TestDatabase.text(others)).as("retry %d: the account's untried rows not written", retry)
                    .isEqualTo(before);
            assertThat(scalar("select failures from inbox_account_backoff where account_id = 1"))
                    .isEqualTo(retry + 1);
        }
        assertThat(probed).as("each retry tries a row not tried yet, so no row's attempts are spent by the outage")
                .doesNotHaveDuplicates();
        assertThat(scalar("select count(*) from webhook_inbox where attempts = 1")).as("2 + 3 rows tried once")
                .isEqualTo(5);
        assertThat(scalar("select max(attempts) from webhook_inbox")).isEqualTo(1);
        assertThat(scalar("select count(*) from webhook_inbox where failed_at is not null")).isZero();
    }

    @Test
    void aRetryThatGoesThroughMakesTheAccountsWaitingOnTheWorkersOwnDelayDueAndKeepsARetryAfter()
            throws Exception {
        insert("a1-0", 1, 30);
        insert("a2-0", 2, 20);
        insert("a3-0", 3, 10);
        InboxWorker worker = worker(w -> fixedBackoff(w, 60_000));
        List<AccountWork> first = worker.claim();
        assertThat(first).extracting(AccountWork::accountId).containsExactly(1L, 2L, 3L);
        worker.failed(first.get(0), HTTP_500);
        worker.failed(first.get(1), HTTP_500);
        worker.failed(first.get(2), new MetaKitApiException(429, Duration.ofSeconds(60), "MetaKit API 429"));
        Instant asked = TestDatabase.instant("select retry_at from inbox_account_backoff where account_id = 3");
        // account 1's minute has passed (its retry time set to now, standing in for the wait)
        TestDatabase.exec("update inbox_account_backoff set retry_at = now() where account_id = 1");

        AccountWork probe = single(worker.claim());
        assertThat(probe.accountId()).isEqualTo(1L);
        Instant before = TestDatabase.clock();
        worker.completed(probe);

        assertThat(TestDatabase.instant("select retry_at from inbox_account_backoff where account_id = 2"))
                .as("the API answers again: account 2's own backoff is cut short").isBeforeOrEqualTo(TestDatabase.clock())
                .isAfterOrEqualTo(before);
        assertThat(TestDatabase.instant("select retry_at from inbox_account_backoff where account_id = 3"))
                .as("the Retry-After MetaKit sent is kept").isEqualTo(asked);
        assertThat(worker.claim()).as("account 2's probe, at once").extracting(AccountWork::accountId)
                .containsExactly(2L);
    }

    @Test
    void duringAnOutageOneAccountIsRetriedForAllAfterItsFailuresInARowNeverOneMetaKitAskedToWait() throws Exception {
        for (long account = 1; account <= 4; account++) {
            insert("a" + account + "-0", account, 10);
        }
        // account 1: the outage's third failure in a row, due in a minute; 2: one failure (a hiccup); 3: the longest
        // wait, but MetaKit's Retry-After; 4: three failures, due in two minutes
        TestDatabase.exec("insert into inbox_account_backoff (account_id, retry_at, failures, last_error, asked) values"
                + " (1, now() + interval '1 minute', 3, 'MetaKit API 500', false),"
                + " (2, now() + interval '30 seconds', 1, 'MetaKit API 500', false),"
                + " (3, now() + interval '30 seconds', 5, 'MetaKit API 429', true),"
                + " (4, now() + interval '2 minutes', 3, 'MetaKit API 500', false)");
        InboxClaims claims = new InboxClaims(TestDatabase.dataSource());

        Instant before = TestDatabase.clock();
        assertThat(claims.dueCanary(Duration.ofSeconds(5))).as("the one due first of those eligible").isEqualTo(1L);
        assertThat(TestDatabase.instant("select retry_at from inbox_account_backoff where account_id = 1"))
                .isBetween(before, TestDatabase.clock());
        assertThat(claims.dueCanary(Duration.ofSeconds(5))).as("then the next").isEqualTo(4L);
        assertThat(claims.dueCanary(Duration.ofSeconds(5))).as("a hiccup and a Retry-After are never retried early")
                .isNull();
        assertThat(scalar("select count(*) from inbox_account_backoff where retry_at > now() + interval '20 seconds'"))
                .isEqualTo(2);
    }

    @Test
    void whileItsAccountsBackOffTheDoorbellWaitsLongerAfterEachEmptyClaimAndNoLongerOnceWorkIsClaimed()
            throws Exception {
        insert("a1-0", 1, 10);
        InboxWorker worker = worker(w -> fixedBackoff(w, 60_000));
        assertThat(worker.ringDelayMillis(50, 1000)).as("the coalescing wait").isEqualTo(50);

        worker.failed(single(worker.claim()), HTTP_500);
        insert("a1-1", 1, 0); // an outage with traffic: a delivery for the account backing off rings the doorbell
        assertThat(worker.claim()).isEmpty();
        assertThat(worker.ringDelayMillis(50, 1000)).isEqualTo(100);
        assertThat(worker.claim()).isEmpty();
        assertThat(worker.ringDelayMillis(50, 1000)).isEqualTo(200);

        insert("a2-0", 2, 0);
        AccountWork other = single(worker.claim());
        assertThat(other.accountId()).isEqualTo(2L);
        assertThat(worker.ringDelayMillis(50, 1000)).as("work claimed: the coalescing wait again").isEqualTo(50);
        worker.completed(other);
        assertThat(worker.claim()).isEmpty();
        assertThat(worker.ringDelayMillis(50, 1000)).as("a reconcile went through: MetaKit answers")
                .isEqualTo(50);
    }

    @Test
    void theCanaryLooksAtOneRowOfEachAccountBackingOffWhateverTheirBacklog() throws Exception {
        // an outage with traffic: four accounts backing off after the outage's failures, 2,000 rows piled up each
        for (long account = 1; account <= 4; account++) {
            ClaimedRows.tradeRows("a" + account + "-", account, 2_000, 60);
        }
        TestDatabase.exec("insert into inbox_account_backoff (account_id, retry_at, failures, last_error)"
                + " select a, now() + a * interval '1 minute', 5, 'MetaKit API 500' from generate_series(1, 4) a");

        ClaimedRows.Read<Long> canary = ClaimedRows.readingRows(
                ds -> new InboxClaims(ds).dueCanary(Duration.ofSeconds(5)));
        assertThat(canary.answer()).as("the account due first").isEqualTo(1L);
        assertThat(canary.rows()).as("rows of webhook_inbox the canary read, with 8,000 pending").isLessThan(50);
    }

    @Test
    void aClaimReadsNoneOfTheRowsPiledUpForAnAccountBackingOff() throws Exception {
        insert("a1-0", 1, 100);
        InboxWorker worker = worker(w -> {
            fixedBackoff(w, 60_000);
        });
        worker.failed(single(worker.claim()), HTTP_500);
        // an API outage with traffic: rows keep arriving for the account, each due by its own time and older than
        // the other account's row
        ClaimedRows.tradeRows("a1-late-", 1, 5_000, 50);
        insert("a2-0", 2, 0);

        ClaimedRows.Read<List<InboxRow>> claim = ClaimedRows.readingRows(
                ds -> new InboxClaims(ds).claim(Claimant.newBoot("reader"), 500, Duration.ofSeconds(30)));
        assertThat(claim.answer()).extracting(InboxRow::key).containsExactly("a2-0");
        assertThat(claim.rows()).as("rows of webhook_inbox the claim read, with 5,001 of the account backing off")
                .isLessThan(50);
        assertThat(scalar("select count(*) from webhook_inbox where account_id = 1 and attempts = 0"))
                .as("nothing written for the piled rows either").isEqualTo(5_000);
    }

    @Test
    void aRowIsFailedOnlyWhenItsOwnAttemptsAreSpent() throws Exception {
        insert("old", 1, 100);
        insert("young", 1, 50);
        TestDatabase.exec("update webhook_inbox set attempts = 1 where delivery_key = 'old'");
        InboxWorker worker = worker(w -> {
            w.setMaxAttempts(2);
            fixedBackoff(w, 200);
        });
        AccountWork first = single(worker.claim());
        assertThat(first.rows()).extracting(InboxRow::key, InboxRow::attempts).containsExactlyInAnyOrder(
                org.assertj.core.groups.Tuple.tuple("old", 2), org.assertj.core.groups.Tuple.tuple("young", 1));

        worker.failed(first, HTTP_500);

        assertThat(scalar("select count(*) from webhook_inbox where delivery_key = 'old' and failed_at is not null"))
                .isEqualTo(1);
        assertThat(scalar("select count(*) from webhook_inbox where delivery_key = 'young' and failed_at is null"
                + " and claimed_by is null and exists (select 1 from inbox_account_backoff where account_id = 1"
                + " and failures = 1)")).as("the younger row waits for the account's retry").isEqualTo(1);
        assertThat(worker.failedCount()).isEqualTo(1);

        AtomicReference<List<AccountWork>> retry = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
            retry.set(worker.claim());
            return !retry.get().isEmpty();
        });
        assertThat(single(retry.get()).rows()).extracting(InboxRow::key, InboxRow::attempts)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("young", 2));
        worker.failed(single(retry.get()), HTTP_500);
        assertThat(scalar("select count(*) from webhook_inbox where failed_at is not null and attempts = 2"))
                .isEqualTo(2);
    }

    @Test
    void rowsOfAnAccountFailedTogetherAreOneWarningWithTheirCountNotOnePerRow() throws Exception {
        ClaimedRows.tradeRows("spent-", 1, 50, 100);
        TestDatabase.exec("update webhook_inbox set attempts = 1");
        InboxWorker worker = worker(w -> {
            w.setMaxAttempts(2);
            fixedBackoff(w, 60_000);
        });
        AccountWork work = single(worker.claim());

        try (LogCapture log = LogCapture.atOrAbove(Level.WARN)) {
            worker.failed(work, HTTP_500);
            List<String> failedLines = log.lines().stream().filter(l -> l.contains("failed after")).toList();
            assertThat(failedLines).hasSize(1);
            assertThat(failedLines.get(0)).contains("50 inbox rows failed after 2 attempts or more (account 1")
                    .contains("MetaKit API 500").contains(" and 47 more");
        }
        assertThat(scalar("select count(*) from webhook_inbox where failed_at is not null"
                + " and last_error = 'MetaKit API 500'")).isEqualTo(50);
    }

    @Test
    void retryAfterSetsTheAccountsRetryTimeAndAShorterDelayNeverCutsItShort() throws Exception {
        insert("a1-0", 1, 10);
        InboxWorker worker = worker(w -> w.setBackoffBaseMillis(100));
        AccountWork work = single(worker.claim());
        Instant failedFrom = TestDatabase.clock();
        worker.failed(work, new MetaKitApiException(429, Duration.ofSeconds(30), "MetaKit API 429"));
        Instant failedBy = TestDatabase.clock();
        Instant retryAt = TestDatabase.instant("select retry_at from inbox_account_backoff where account_id = 1");
        assertThat(retryAt).as("MetaKit's Retry-After, not the 100 ms backoff")
                .isBetween(failedFrom.plusSeconds(30), failedBy.plusSeconds(30));

        // another instance, holding a row of the account that arrived since, fails it with a short delay
        Claimant other = Claimant.newBoot("other");
        new InstanceLiveness(TestDatabase.dataSource(), other, Duration.ofSeconds(2)).beat();
        insert("a1-1", 1, 0);
        TestDatabase.exec("update webhook_inbox set claimed_by = 'other', claim_token = '" + other.bootToken()
                + "', claimed_until = now() + interval '1 minute' where delivery_key = 'a1-1'");
        InboxClaims.Backoff shorter = new InboxClaims(TestDatabase.dataSource())
                .backOff(other, 1, StoredKeys.of("a1-1"), StoredKeys.of("a1-1"), "another failure",
                        Duration.ofMillis(100), true);
        assertThat(shorter.retryAt()).as("the retry time MetaKit asked for, not cut short").isEqualTo(retryAt);
        assertThat(shorter.claimedRows()).isEqualTo(1);
        assertThat(shorter.failures()).as("the account's second failure in a row").isEqualTo(2);
    }

    @Test
    void anInstanceDoesNotClaimAnAccountAgainWhileItIsStillWorkingIt() throws Exception {
        insert("a1-0", 1, 10);
        InboxWorker worker = worker(w -> { });
        AccountWork working = single(worker.claim());
        insert("a1-1", 1, 0);
        insert("a2-0", 2, 0);

        assertThat(worker.claim()).extracting(AccountWork::accountId).containsExactly(2L);
        assertThat(worker.claim()).isEmpty();

        worker.completed(working);
        assertThat(worker.claim()).extracting(ClaimedRows::deliveryKeys).containsExactly(List.of("a1-1"));
    }

    @Test
    void anAccountWhoseWorkNeverEndsIsGivenUpAfterItsHoldLimitAndClaimedAgainWithItsRows() throws Exception {
        insert("a1-0", 1, 10);
        InboxWorker worker = worker(w -> w.setLeaseSeconds(1));
        single(worker.claim());
        insert("a1-1", 1, 0);
        assertThat(worker.claim()).isEmpty();

        // nothing completes or fails the work: its lease is renewed (so no one else takes it while it may still be
        // worked) until MAX_HOLD_LEASES leases have passed; then both rows are claimed again, by anyone
        long claimed = System.nanoTime();
        Map<String, Integer> attempts = new java.util.concurrent.ConcurrentHashMap<>();
        await().atMost(Duration.ofSeconds(WorkInHand.MAX_HOLD_LEASES + 10)).pollInterval(Duration.ofMillis(100)).until(() -> {
            worker.claim().forEach(w -> w.rows().forEach(r -> attempts.put(r.key(), r.attempts())));
            return attempts.size() == 2;
        });
        assertThat(attempts).containsEntry("a1-0", 2).containsEntry("a1-1", 1);
        assertThat(Duration.ofNanos(System.nanoTime() - claimed)).as("held, renewed, for its hold limit first")
                .isGreaterThanOrEqualTo(Duration.ofSeconds(WorkInHand.MAX_HOLD_LEASES - 1));
    }

    @Test
    void whileTheApiAnswers500AnAccountCostsOneCallPerRetryNotOnePerDeliveryAndItsBacklogOneReconcileAfter()
            throws Exception {
        try (FakeMetaKit metakit = new FakeMetaKit()) {
            metakit.open(1, 100, "0.10", "0", "0", Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60));
            metakit.outage(500);
            try (RunningInbox inbox = RunningInbox.againstFakeMetaKit(metakit, Map.of(
                    "metakit.worker.backoff-base-millis", "1000",
                    "metakit.worker.backoff-max-millis", "1000",
                    "metakit.worker.max-attempts", "100"))) {
                long start = System.nanoTime();
                for (int i = 0; i < 12; i++) {
                    // distinct bodies (created_at): each one a new delivery
                    assertThat(inbox.postSigned(event("position.modified", 1, 100), "position.modified")
                            .statusCode()).isEqualTo(200);
                    // the load's rhythm, not a stand-in for a condition: 4 deliveries a second keep arriving
                    // while the account backs off
                    Thread.sleep(250);
                }
                int callsDuringOutage = accountCalls(metakit);
                double outageSeconds = (System.nanoTime() - start) / 1e9;
                metakit.open(1, 100, "0.30", "0", "0",
                        Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60));
                metakit.recover();
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() ->
                        scalar("select count(*) from webhook_inbox where processed_at is null") == 0);
                int callsAfter = accountCalls(metakit) - callsDuringOutage;

                // each retry is at least 1 s after the failure before it: 12 deliveries over about 3 s are a few calls
                assertThat(callsDuringOutage).as("calls during %.1f s of outage", outageSeconds)
                        .isPositive().isLessThanOrEqualTo((int) Math.ceil(outageSeconds) + 1);
                assertThat(callsAfter).as("the account's 12 waiting rows: one reconcile").isLessThanOrEqualTo(2);
                assertThat(scalar("select count(*) from webhook_inbox where processed_at is not null")).isEqualTo(12);
                assertThat(scalar("select count(*) from positions where volume = 0.30")).isEqualTo(1);
            }
        }
    }

    @Test
    void whenMetaKitAnswersAgainTheAccountsBackingOffAreWorkedWithoutWaitingOutTheirRetry() throws Exception {
        try (FakeMetaKit metakit = new FakeMetaKit()) {
            Instant opened = Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60);
            for (long account = 1; account <= 3; account++) {
                metakit.open(account, 100 + account, "0.10", "0", "0", opened);
            }
            metakit.outage(500);
            // changed: every retry of an account a minute after its failure (the default 1 s doubling; the tests'
            // 100 ms up to 1 s), so that neither its own retry nor the canary (which waits for three failures of one
            // account) can be what works its rows within the test's wait: only MetaKit's return, seen by the worker
            try (RunningInbox inbox = RunningInbox.againstFakeMetaKit(metakit, Map.of(
                    "metakit.worker.backoff-base-millis", "60000",
                    "metakit.worker.backoff-max-millis", "60000"))) {
                for (long account = 1; account <= 3; account++) {
                    assertThat(inbox.postSigned(event("position.modified", account, 100 + account),
                            "position.modified").statusCode()).isEqualTo(200);
                }
                await().atMost(Duration.ofSeconds(20)).until(() ->
                        scalar("select count(*) from inbox_account_backoff where retry_at > now()") == 3);
                assertThat(scalar("select max(failures) from inbox_account_backoff")).isEqualTo(1);

                try (LogCapture log = LogCapture.atOrAbove(Level.INFO)) {
                    metakit.recover();
                    await().atMost(Duration.ofSeconds(20)).until(() ->
                            scalar("select count(*) from webhook_inbox where processed_at is null") == 0);
                    assertThat(scalar("select count(*) from inbox_account_backoff")).isZero();
                    assertThat(log.lines()).anyMatch(l ->
                            l.contains("MetaKit answers again: 3 accounts backing off are due now"));
                }
            }
        }
    }

    /** the reconciles' calls, not the status watch's */
    private static int accountCalls(FakeMetaKit metakit) {
        return metakit.calls("positions") + metakit.calls("deals");
    }

    private static AccountWork single(List<AccountWork> work) {
        assertThat(work).hasSize(1);
        return work.get(0);
    }

    /** Every retry of an account after {@code millis}, however many came before (the base and the bound the same). */
    private static void fixedBackoff(InboxWorker worker, long millis) {
        worker.setBackoffBaseMillis(millis);
        worker.setBackoffMaxMillis(millis);
    }

    private InboxWorker worker(java.util.function.Consumer<InboxWorker> settings) {
        return workers.start("account-backoff-test", settings);
    }

    /** A pending trade-event row of {@code account}, due {@code ageSeconds} ago. */
    private static void insert(String key, long account, int ageSeconds) throws Exception {
        try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
                "insert into webhook_inbox (delivery_key, event, account_id, body, next_attempt_at)"
                        + " values (?, 'position.modified', ?, ?, now() - ? * interval '1 second')")) {
            ps.setString(1, key);
            ps.setLong(2, account);
            ps.setString(3, new String(event("position.modified", account, 100 + account), StandardCharsets.UTF_8));
            ps.setInt(4, ageSeconds);
            ps.executeUpdate();
        }
    }
}
