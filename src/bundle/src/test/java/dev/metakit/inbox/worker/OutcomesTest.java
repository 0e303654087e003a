package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.metakit.MetaKitApiException;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static dev.metakit.inbox.support.TestDatabase.exec;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static dev.metakit.inbox.worker.ClaimedRows.claimAll;
import static dev.metakit.inbox.worker.ClaimedRows.trade;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the worker writes for claimed rows, decided by {@link Outcomes} and recorded on the test database: retries
 * with the account backing off, failures on a row's own attempts, dead letters, and nothing for rows another boot
 * took over. Settings: 3 attempts, a 10 s base delay and a 60 s longest, so each delay is told apart.
 */
class OutcomesTest {
    private final WorkerCounters counters = new WorkerCounters();
    private Claimant boot;
    private Outcomes outcomes;

    @BeforeEach
    void clean() throws Exception {
        TestDatabase.truncateAll();
        boot = ClaimedRows.beatingBoot("outcomes-test").self();
        RetryPolicy retries = new RetryPolicy(3, Duration.ofSeconds(10), Duration.ofSeconds(60));
        outcomes = new Outcomes(ClaimedRows.CLAIMS, boot, retries, Duration.ofSeconds(60), counters);
    }

    @Test
    void aFailedReconcileFailsTheRowsWhoseAttemptsAreSpentAndPutsTheOthersOnTheAccountsRetryTime() throws Exception {
        trade("spent", 1, 10);
        trade("young", 1, 11);
        exec("update webhook_inbox set attempts = 2 where delivery_key = 'spent'");
        AccountWork work = work(1);
        Instant before = TestDatabase.clock();

        outcomes.failed(work, new MetaKitApiException(500, null, "MetaKit API 500"), "MetaKit API 500").record();

        Instant after = TestDatabase.clock();
        assertThat(scalar("select count(*) from webhook_inbox where delivery_key = 'spent' and failed_at is not null"
                + " and last_error = 'MetaKit API 500'")).isEqualTo(1);
        assertThat(scalar("select count(*) from webhook_inbox w join inbox_account_backoff b using (account_id)"
                + " where w.delivery_key = 'young' and w.claimed_by is null and w.failed_at is null"
                + " and w.attempts = 1 and b.failures = 1")).as("the row still going, its account backing off")
                .isEqualTo(1);
        assertThat(TestDatabase.instant("select retry_at from inbox_account_backoff where account_id = 1"))
                .as("the first retry: the base delay after the failure")
                .isBetween(before.plusSeconds(10), after.plusSeconds(10));
        assertThat(counters.failed()).isEqualTo(1);
        assertThat(counters.retried()).isEqualTo(1);
    }

    @Test
    void aRefusedApiKeyGivesTheAttemptBackAndTheAccountWaitsTheLongestDelay() throws Exception {
        trade("a1", 1, 10);
        AccountWork work = work(1);
        Instant before = TestDatabase.clock();

        outcomes.failed(work, new MetaKitApiException(401, null, "MetaKit API 401"), "MetaKit API 401").record();

        Instant after = TestDatabase.clock();
        assertThat(scalar("select count(*) from webhook_inbox w join inbox_account_backoff b using (account_id)"
                + " where w.attempts = 0 and w.failed_at is null and w.claimed_by is null and b.failures = 0"))
                .as("no failure counted").isEqualTo(1);
        assertThat(TestDatabase.instant("select retry_at from inbox_account_backoff where account_id = 1"))
                .as("the longest delay").isBetween(before.plusSeconds(60), after.plusSeconds(60));
        assertThat(counters.failed()).isZero();
    }

    @Test
    void aDeadLetterIsFailedAtOnceWithItsReasonAndCountedUnderIt() throws Exception {
        ClaimedRows.pending("poison", "position.opened", 1L, "not json");
        InboxRow row = claimAll(boot, Duration.ofMinutes(1)).get(0);

        outcomes.deadLettered(row, PoisonReason.NOT_JSON, "not valid JSON").record();

        assertThat(TestDatabase.text("select last_error from webhook_inbox where failed_at is not null"))
                .isEqualTo("unusable body, not retried (not_json): not valid JSON");
        assertThat(counters.deadLettered(PoisonReason.NOT_JSON)).isEqualTo(1);
        assertThat(counters.deadLettered(PoisonReason.MALFORMED)).isZero();
    }

    @Test
    void aDeadLettersLineCarriesTheDeliveryItsAccountAndItsPostsTraceInTheLoggingContext() throws Exception {
        String post = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        ClaimedRows.pending("poison", "position.opened", 7L, "not json");
        exec("update webhook_inbox set trace_parent = '" + post + "' where delivery_key = 'poison'");
        InboxRow row = claimAll(boot, Duration.ofMinutes(1)).get(0);
        List<Map<String, String>> contexts = new CopyOnWriteArrayList<>();
        AbstractAppender capture = new AbstractAppender("dead-letter-context", null, null, true,
                Property.EMPTY_ARRAY) {
            @Override
            public void append(LogEvent event) {
                if (event.getMessage().getFormattedMessage().contains("dead-lettered")) {
                    contexts.add(event.getContextData().toMap());
                }
            }
        };
        // on the root logger, as LogCapture does: Logger.addAppender would leave a logger config of Outcomes' own
        // behind, and the later tests of this JVM saw none of Outcomes' lines (AccountBackoffTest's warning among them)
        LoggerContext logging = (LoggerContext) LogManager.getContext(false);
        capture.start();
        logging.getConfiguration().getRootLogger().addAppender(capture, null, null);
        logging.updateLoggers();
        try {
            outcomes.deadLettered(row, PoisonReason.NOT_JSON, "not valid JSON").record();
        } finally {
            logging.getConfiguration().getRootLogger().removeAppender(capture.getName());
            logging.updateLoggers();
            capture.stop();
        }

        assertThat(contexts).singleElement().satisfies(context -> assertThat(context)
                .containsEntry("metakit.delivery", "poison").containsEntry("metakit.account", "7")
                .containsEntry("trace_id", "0af7651916cd43dd8448eb211c80319c")
                .containsEntry("span_id", "b7ad6b7169203331"));
        assertThat(MDC.getCopyOfContextMap()).as("taken off the thread after the line").isNullOrEmpty();
    }

    @Test
    void rowsAnotherBootTookOverAreNotWrittenButCountedAsFenced() throws Exception {
        trade("a1", 1, 10);
        trade("a2", 1, 11);
        AccountWork work = work(1);
        exec("update webhook_inbox set claim_token = '00000000-0000-0000-0000-000000000001' where delivery_key = 'a2'");

        outcomes.completed(work, false).record();

        assertThat(scalar("select count(*) from webhook_inbox where processed_at is not null")).isEqualTo(1);
        assertThat(counters.processed()).isEqualTo(1);
        assertThat(counters.fenced()).isEqualTo(1);
    }

    private AccountWork work(long account) throws Exception {
        List<InboxRow> rows = claimAll(boot, Duration.ofMinutes(1));
        return new AccountWork(account, rows, List.of());
    }
}
