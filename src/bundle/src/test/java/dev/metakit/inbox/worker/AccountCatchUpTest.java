package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.InboxAdmin;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.inbox.InstanceLiveness;
import dev.metakit.inbox.reconcile.Hint;
import dev.metakit.inbox.reconcile.ReconcileResult;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static dev.metakit.inbox.inbox.InboxClaims.CATCH_UP_BEHIND;
import static dev.metakit.inbox.support.TestDatabase.exec;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static dev.metakit.inbox.support.TestEvents.event;
import static dev.metakit.inbox.worker.ClaimedRows.CLAIMS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An account's backlog behind its retry is settled by one reconcile and one row: the probe's claim says there is a
 * backlog, the committed reconcile writes the account's {@code inbox_account_settled} row instead of any of the
 * backlog's rows, claims start after it, the backlog counts leave it out, and the rows are marked processed later in
 * batches. On the test database, without a CamelContext (the reconcile's own part is {@code CatchUpReconcileTest}).
 */
class AccountCatchUpTest {
    private static final Duration LEASE = Duration.ofMinutes(1);

    @RegisterExtension
    final TestWorkers workers = new TestWorkers();

    @Test
    void aRetryWithABacklogBehindItSettlesTheBacklogInOneRowAndLaterClaimsStartAfterIt() throws Exception {
        int backlog = CATCH_UP_BEHIND + 200;
        // stored a minute ago, while the account backed off
        ClaimedRows.tradeRows("a1-", 1, backlog, 60);
        ClaimedRows.tradeRows("a2-", 2, 1, 30);
        backoffRanOut(1);
        CLAIMS.advancePendingSince();
        InstanceLiveness boot = ClaimedRows.beatingBoot("catch-up-test");

        Instant before = TestDatabase.clock();
        List<InboxRow> claimed = CLAIMS.claim(boot.self(), 100, 10_000, LEASE);
        Instant after = TestDatabase.clock();
        List<InboxRow> probe = claimed.stream().filter(r -> r.accountId() == 1).toList();
        assertThat(probe).as("account 1's retry: one row").hasSize(1);
        InboxRow.Backlog behind = probe.get(0).backlog();
        assertThat(behind).as("the probe's claim says a backlog is behind it").isNotNull();
        assertThat(behind.claimedAt()).as("the claim's time, on the database's clock").isBetween(before, after);
        assertThat(behind.pendingFrom()).as("where pending rows begin: no later than the oldest row's signature")
                .isNotNull().isBeforeOrEqualTo(TestDatabase.instant("select min(signed_at) from webhook_inbox"));
        assertThat(claimed.stream().filter(r -> r.accountId() == 2).map(InboxRow::backlog))
                .as("an account that is not retrying").containsOnlyNulls();

        // a row stored after the retry's claim: after its settle time whatever the machine's pace
        ClaimedRows.tradeRows("a1-fresh-", 1, 1, 0);
        AccountWork work = new AccountWork(1, probe, List.of());
        assertThat(work.catchUp()).isEqualTo(behind);
        assertThat(work.settleThrough()).isEqualTo(behind.claimedAt().minus(AccountWork.SETTLE_MARGIN));
        String versions = "select string_agg(delivery_key || '@' || xmin, ',' order by delivery_key)"
                + " from webhook_inbox where account_id = 1 and delivery_key <> '" + probe.get(0).key() + "'";
        String untouched = TestDatabase.text(versions);

        assertThat(CLAIMS.markProcessed(boot.self(), 1, work.keys(), work.settleThrough())).isEqualTo(1);

        assertThat(TestDatabase.text(versions)).as("none of the backlog's rows written by the settle").isEqualTo(untouched);
        assertThat(TestDatabase.instant("select through from inbox_account_settled where account_id = 1"))
                .isEqualTo(work.settleThrough());
        assertThat(scalar("select count(*) from inbox_account_backoff")).as("the backoff ended").isZero();
        assertThat(new InboxAdmin(TestDatabase.dataSource()).backlog().pending())
                .as("pending: the fresh row (and account 2's, claimed): the settled ones are not").isEqualTo(2);

        List<InboxRow> next = CLAIMS.claim(boot.self(), 100, 10_000, LEASE);
        assertThat(next).extracting(InboxRow::key).as("a claim starts after the settled rows")
                .containsExactly("a1-fresh-1");

        int marked = 0;
        int batch;
        do {
            batch = CLAIMS.markSettled(500, row -> true).total();
            marked += batch;
        } while (batch > 0);
        assertThat(marked).as("the settled rows, marked processed in batches").isEqualTo(backlog - 1);
        assertThat(scalar("select count(*) from webhook_inbox where account_id = 1 and processed_at is null"))
                .as("only the row claimed after the settle").isEqualTo(1);
        assertThat(scalar("select count(*) from webhook_inbox where account_id = 2 and processed_at is null"))
                .as("another account's rows are not its to settle").isEqualTo(1);
    }

    @Test
    void aRowPutBackAfterTheSettleIsClaimedAgainNotSwallowedByIt() throws Exception {
        backlogBehindARetry(CATCH_UP_BEHIND + 10);
        InstanceLiveness boot = ClaimedRows.beatingBoot("catch-up-test");
        AccountWork work = new AccountWork(1, CLAIMS.claim(boot.self(), 100, 10_000, LEASE), List.of());
        assertThat(work.catchUp()).isNotNull();
        CLAIMS.markProcessed(boot.self(), 1, work.keys(), work.settleThrough());
        while (CLAIMS.markSettled(5_000, row -> true).total() > 0) {
            // marks every settled row
        }
        String replayed = work.keys().get(0).deliveryKey();

        assertThat(new InboxAdmin(TestDatabase.dataSource()).replay(1L, null, null)).as("the account's rows replayed")
                .isEqualTo(CATCH_UP_BEHIND + 10);

        assertThat(CLAIMS.markSettled(5_000, row -> true).total()).as("replayed rows are pending again, not settled")
                .isZero();
        assertThat(CLAIMS.claim(boot.self(), 100, 10_000, LEASE)).extracting(InboxRow::key)
                .hasSize(CATCH_UP_BEHIND + 10).contains(replayed);
    }

    @Test
    void aSmallBacklogIsClaimedAndReadAfterTheProbeNotSettledUnread() throws Exception {
        backlogBehindARetry(CATCH_UP_BEHIND);
        InstanceLiveness boot = ClaimedRows.beatingBoot("catch-up-test");

        List<InboxRow> probe = CLAIMS.claim(boot.self(), 100, 10_000, LEASE);

        assertThat(probe).hasSize(1);
        assertThat(probe.get(0).backlog()).as("%d rows behind the probe: one claim takes them", CATCH_UP_BEHIND - 1)
                .isNull();
        assertThat(new AccountWork(1, probe, List.of()).settleThrough()).isNull();
    }

    @Test
    void aCatchUpWhoseSnapshotCameTooLateSettlesNothingButItsOwnRow() throws Exception {
        backlogBehindARetry(CATCH_UP_BEHIND + 10);
        InboxWorker worker = workers.start("catch-up-test");
        AccountWork work = worker.claim().get(0);
        assertThat(work.catchUp()).isNotNull();

        // a later snapshot was applied first (a full reconcile's, which did not read the backlog's deals)
        worker.completed(work, ReconcileResult.stale(1));

        assertThat(scalar("select count(*) from inbox_account_settled")).isZero();
        assertThat(scalar("select count(*) from webhook_inbox where processed_at is not null")).isEqualTo(1);
        assertThat(scalar("select count(*) from inbox_account_backoff")).isZero();
    }

    @Test
    void aBodyNoRetryCanFixInASettledBacklogIsStillDeadLetteredWithItsReason() throws Exception {
        backlogBehindARetry(CATCH_UP_BEHIND + 10);
        // stored after them: the retry's probe, the account's oldest row, is one of the others
        exec("insert into webhook_inbox (delivery_key, event, account_id, body, next_attempt_at)"
                + " values ('a1-poison', 'position.modified', 1, 'not json', now() - interval '50 seconds')");
        InboxWorker worker = workers.start("catch-up-test");
        List<AccountWork> probe = worker.claim();
        assertThat(probe).hasSize(1);
        assertThat(probe.get(0).catchUp()).isNotNull();

        worker.completed(probe.get(0));

        // the worker's upkeep marks the settled rows and puts the unreadable one back; its next claims take it
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
            worker.claim().forEach(worker::completed);
            return scalar("select count(*) from webhook_inbox where processed_at is null and failed_at is null") == 0;
        });
        assertThat(TestDatabase.text("select last_error from webhook_inbox where delivery_key = 'a1-poison'"
                + " and processed_at is null and failed_at is not null")).startsWith("unusable body, not retried");
        assertThat(scalar("select count(*) from webhook_inbox where processed_at is not null"))
                .isEqualTo(CATCH_UP_BEHIND + 10);
    }

    @Test
    void aCatchUpReadsTheTicketsOfTheRowsOfItsLastMomentsAndSettlesThemWithTheRest() throws Exception {
        backlogBehindARetry(CATCH_UP_BEHIND + 10);
        InboxWorker worker = workers.start("catch-up-test");
        // stored 4 s before the claim below: settled with the rest (3 s before the claim and earlier), and read for
        // its ticket (the last 10 s before that; its close may be in no deal yet); inserted just before the claim, so
        // only a stall of 6 s between the two could take it out of the window
        exec("insert into webhook_inbox (delivery_key, event, account_id, body, next_attempt_at) values ('a1-recent',"
                + " 'position.closed', 1, '" + new String(event("position.closed", 1, 555), StandardCharsets.UTF_8)
                + "', now() - interval '4 seconds')");

        List<AccountWork> claimed = worker.claim();

        assertThat(claimed).hasSize(1);
        AccountWork work = claimed.get(0);
        assertThat(work.catchUp()).isNotNull();
        assertThat(work.hints()).extracting(Hint::ticket).as("the probe's ticket and the recent row's").contains(555L)
                .hasSize(2);
        assertThat(work.reconcile().backlogFrom()).as("the deals read from where pending rows begin")
                .isEqualTo(work.catchUp().pendingFrom());
        assertThat(TestDatabase.instant("select next_attempt_at from webhook_inbox where delivery_key = 'a1-recent'"))
                .as("settled by the catch-up").isBeforeOrEqualTo(work.settleThrough());
    }

    @Test
    void aCatchUpMarksTheRowsOfItsLastSecondsItReadWithItsOwnAndLeavesThoseStoredAfterItsClaim() throws Exception {
        Claimed claimed = catchUpWithALastRow(() -> { });
        InboxWorker worker = claimed.worker();
        AccountWork work = claimed.work();

        assertThat(work.catchUp()).isNotNull();
        assertThat(TestDatabase.instant("select next_attempt_at from webhook_inbox where delivery_key = 'a1-last'"))
                .as("after the settle time").isAfter(work.settleThrough());
        assertThat(work.hints()).extracting(Hint::ticket).as("its ticket read").contains(556L);
        storeClose("a1-after", 557); // after the claim: the catch-up never read it

        worker.completed(work);

        assertThat(scalar("select count(*) from webhook_inbox where delivery_key = 'a1-last'"
                + " and processed_at is not null")).as("marked with the catch-up's own row").isEqualTo(1);
        assertThat(worker.claim()).flatExtracting(AccountWork::keys).extracting(InboxKey::deliveryKey)
                .as("the next claim: only the row the catch-up did not read").containsExactly("a1-after");
    }

    @Test
    void aRowReadAlongThatAnotherClaimHoldsMeanwhileIsLeftToThatClaim() throws Exception {
        Claimed claimed = catchUpWithALastRow(() -> { });
        // another instance's claim took it meanwhile (its lease running): its reconcile answers for it
        exec("update webhook_inbox set claimed_by = 'other', claimed_until = now() + interval '1 minute'"
                + " where delivery_key = 'a1-last'");

        claimed.worker().completed(claimed.work());

        assertThat(scalar("select count(*) from webhook_inbox where delivery_key = 'a1-last'"
                + " and processed_at is null and claimed_by = 'other'")).as("left to the claim that holds it")
                .isEqualTo(1);
        assertThat(scalar("select count(*) from webhook_inbox where processed_at is not null"))
                .as("the catch-up's own row").isEqualTo(1);
    }

    @Test
    void aBodyNoRetryCanFixAmongTheRowsReadAlongIsLeftToAClaimThatDeadLettersIt() throws Exception {
        Claimed claimed = catchUpWithALastRow(() -> exec("insert into webhook_inbox (delivery_key, event, account_id,"
                + " body) values ('a1-poison-last', 'position.modified', 1, 'not json')"));

        claimed.worker().completed(claimed.work());
        assertThat(claimed.worker().claim()).as("dead-lettered at its claim: no reconcile").isEmpty();

        assertThat(TestDatabase.text("select last_error from webhook_inbox where delivery_key = 'a1-poison-last'"
                + " and processed_at is null and failed_at is not null")).startsWith("unusable body, not retried");
    }

    @Test
    void theRecentRowsOfSeveralAccountsAreReadInOneStatementAndACutOneIsSaidIncomplete() throws Exception {
        ClaimedRows.tradeRows("a1-", 1, 5, 6);
        ClaimedRows.tradeRows("a2-", 2, 5, 6);
        ClaimedRows.tradeRows("a3-", 3, 5, 6);
        ClaimedRows.tradeRows("a1-old-", 1, 5, 60);
        CLAIMS.advancePendingSince();
        Instant now = TestDatabase.clock();

        InboxClaims.Recent all = CLAIMS.pendingBetween(List.of(1L, 2L), now.minusSeconds(10), now, 100);
        InboxClaims.Recent cut = CLAIMS.pendingBetween(List.of(1L, 2L, 3L), now.minusSeconds(10), now, 7);

        assertThat(all.of(1)).as("account 1's rows of the window, not its older ones").hasSize(5);
        assertThat(all.of(2)).hasSize(5);
        assertThat(all.complete(1) && all.complete(2)).isTrue();
        assertThat(cut.complete(1)).as("read whole before the limit").isTrue();
        assertThat(cut.complete(2)).as("cut by the limit").isFalse();
        assertThat(cut.complete(3)).as("not read").isFalse();
    }

    @Test
    void theBacklogMetersFindTheOldestRowWithoutReadingEveryPendingRow() throws Exception {
        twoAccountsPending();

        ClaimedRows.Read<InboxAdmin.Backlog> read = backlogAsTheMetersReadIt();

        assertThat(read.answer().pending()).isEqualTo(6_000);
        assertThat(read.answer().oldestPendingAge()).isGreaterThanOrEqualTo(Duration.ofSeconds(60));
        assertThat(read.rows()).as("rows read: the count's 6,000 (it stops at 10,001), and a few for the oldest")
                .isGreaterThanOrEqualTo(6_000).isLessThan(6_100);
    }

    @Test
    void theBacklogMetersLeaveASettledBacklogOutWithoutReadingIt() throws Exception {
        twoAccountsPending();
        // account 1's rows (a minute old) settled, account 2's (half a minute old) not
        exec("insert into inbox_account_settled (account_id, through) values (1, now() - interval '45 seconds')");

        ClaimedRows.Read<InboxAdmin.Backlog> read = backlogAsTheMetersReadIt();

        assertThat(read.answer().pending()).as("account 2's rows; account 1's are settled").isEqualTo(3_000);
        assertThat(read.answer().oldestPendingAge()).as("account 2's oldest, not account 1's settled ones")
                .isGreaterThanOrEqualTo(Duration.ofSeconds(30)).isLessThan(Duration.ofSeconds(60));
        assertThat(read.rows()).as("rows read: account 2's, and none of account 1's settled ones")
                .isGreaterThanOrEqualTo(3_000).isLessThan(3_100);
    }

    @Test
    void theMarkerFindsTheAccountsWithSettledRowsLeftByOneRowOfEach() throws Exception {
        twoAccountsPending();
        exec("insert into inbox_account_settled (account_id, through) values (1, now()), (2, now())");

        // a limit of none: the marker looks for the accounts with settled rows left, and marks nothing
        ClaimedRows.Read<InboxClaims.Marked> marker = ClaimedRows.readingRows(
                ds -> new InboxClaims(ds).markSettled(0, row -> true));
        assertThat(marker.answer().total()).isZero();
        assertThat(marker.rows()).as("rows of webhook_inbox read to find the two accounts, with 6,000 settled")
                .isLessThan(50);
    }

    /** 3,000 rows of account 1 stored a minute ago, 3,000 of account 2 half a minute ago. */
    private static void twoAccountsPending() throws Exception {
        ClaimedRows.tradeRows("a1-", 1, 3_000, 60);
        ClaimedRows.tradeRows("a2-", 2, 3_000, 30);
        CLAIMS.advancePendingSince();
    }

    /** What the meters show of the backlog, and how many rows of the inbox they read for it. */
    private static ClaimedRows.Read<InboxAdmin.Backlog> backlogAsTheMetersReadIt() throws Exception {
        return ClaimedRows.readingRows(ds -> new InboxAdmin(ds).backlog());
    }

    /** {@code rows} of account 1 stored a minute ago, and its retry due (its reconciles failed before). */
    private static void backlogBehindARetry(int rows) throws Exception {
        ClaimedRows.tradeRows("a1-", 1, rows, 60);
        backoffRanOut(1);
        CLAIMS.advancePendingSince();
    }

    /** The account's backoff, as failed reconciles leave it, with its retry time come. */
    private static void backoffRanOut(long account) {
        exec("insert into inbox_account_backoff (account_id, retry_at, failures) values (" + account + ", now(), 3)");
    }

    private record Claimed(InboxWorker worker, AccountWork work) {
    }

    /**
     * A retry's catch-up of account 1 claimed, with its close {@code a1-last} stored just before the claim (after its
     * settle time, 3 s before it: not settled by it, but read; only a stall of 3 s between the insert and the claim
     * could take it out of that window) and what {@code alsoStored} stores then.
     */
    private Claimed catchUpWithALastRow(Runnable alsoStored) throws Exception {
        backlogBehindARetry(CATCH_UP_BEHIND + 10);
        InboxWorker worker = workers.start("catch-up-test");
        storeClose("a1-last", 556);
        alsoStored.run();
        AccountWork work = worker.claim().get(0);
        assertThat(work.readAlong()).extracting(InboxKey::deliveryKey).as("answered for by the catch-up")
                .containsExactly("a1-last");
        return new Claimed(worker, work);
    }

    /** A close of account 1 stored now (due now). */
    private static void storeClose(String key, long ticket) {
        exec("insert into webhook_inbox (delivery_key, event, account_id, body) values ('" + key + "',"
                + " 'position.closed', 1, '" + new String(event("position.closed", 1, ticket), StandardCharsets.UTF_8)
                + "')");
    }
}
