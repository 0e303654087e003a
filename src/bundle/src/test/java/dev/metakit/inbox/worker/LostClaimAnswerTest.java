package dev.metakit.inbox.worker;

import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.ShippedWorker;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static dev.metakit.inbox.support.TestDatabase.scalar;
import static dev.metakit.inbox.worker.ClaimedRows.trade;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A failover's in-doubt claim, deterministically: the claim's statement commits on the server and its answer is lost
 * (the primary died between, the connection broke), so the worker sees a failed claim while the rows are claimed by
 * its own live boot. The next claim gives them back and takes them: no row waits behind a claim nobody works on (the
 * lease is 120 s, and the boot's heartbeat keeps it alive). The database is the real test database; only the answer
 * of one statement is dropped, as a broken connection drops it. Default settings.
 */
class LostClaimAnswerTest {
    /** the claim's statement, found by its walk over due accounts */
    private static final String CLAIM = "due_accounts as (";
    /** the account's outcome: its rows processed */
    private static final String PROCESSED = "set processed_at = now()";
    /** the statement whose next answer is lost, by a part of its text */
    private final AtomicReference<String> loseTheNextAnswerOf = new AtomicReference<>();
    private InboxWorker worker;

    @BeforeEach
    void start() throws Exception {
        TestDatabase.truncateAll();
        worker = ShippedWorker.create("node-f");
        worker.setDataSource(losingAnswers(TestDatabase.dataSource()));
        worker.start();
    }

    @AfterEach
    void stop() {
        worker.stop();
    }

    @Test
    void theRowsOfAClaimWhoseAnswerWasLostAreClaimedAgainAtTheNextClaimNotAfterTheLease() throws Exception {
        trade("f-1", 1, 100);
        trade("f-2", 1, 100);
        trade("f-3", 2, 200);
        loseTheNextAnswerOf.set(CLAIM);
        assertThat(worker.claim()).as("the claim whose answer was lost").isEmpty();
        assertThat(scalar("select count(*) from webhook_inbox where claim_token = '"
                + worker.claimant().bootToken() + "' and claimed_until > now() + interval '60 seconds'"))
                .as("its rows are claimed all the same, by this live boot, for the lease").isEqualTo(3);

        List<AccountWork> work = worker.claim();

        assertThat(work).flatExtracting(ClaimedRows::deliveryKeys).containsExactlyInAnyOrder("f-1", "f-2", "f-3");
        assertThat(work).flatExtracting(AccountWork::rows).extracting(r -> r.attempts())
                .as("the lost claim's attempt was given back").containsOnly(1);
        work.forEach(worker::completed);
        assertThat(scalar("select count(*) from webhook_inbox where processed_at is not null")).isEqualTo(3);
        assertThat(worker.fencedCount()).as("rows said taken over by another instance").isZero();
    }

    @Test
    void rowsInHandAreNotGivenBackWithThoseOfTheLostClaim() throws Exception {
        trade("h-1", 1, 100);
        List<AccountWork> inHand = worker.claim();
        assertThat(inHand).hasSize(1);
        trade("h-2", 2, 200);
        loseTheNextAnswerOf.set(CLAIM);
        assertThat(worker.claim()).isEmpty();

        assertThat(worker.claim()).flatExtracting(ClaimedRows::deliveryKeys).containsExactly("h-2");
        inHand.forEach(worker::completed);
        assertThat(scalar("select count(*) from webhook_inbox where delivery_key = 'h-1' and processed_at is not null"
                + " and attempts = 1")).as("the work in hand kept its claim").isEqualTo(1);
        assertThat(worker.fencedCount()).isZero();
    }

    @Test
    void anOutcomeWrittenAgainAfterItsAnswerWasLostSaysNoOtherInstanceTookItsRows() throws Exception {
        trade("o-1", 1, 100);
        trade("o-2", 1, 100);
        List<AccountWork> work = worker.claim();
        assertThat(work).hasSize(1);
        List<String> lines;
        try (LogCapture log = LogCapture.atOrAbove(Level.INFO)) {
            loseTheNextAnswerOf.set(PROCESSED);
            work.forEach(worker::completed);
            assertThat(scalar("select count(*) from webhook_inbox where processed_at is not null"))
                    .as("the write committed though its answer was lost").isEqualTo(2);
            // the kept outcome is written again by the worker's upkeep; its rows are settled already
            await().atMost(Duration.ofSeconds(30)).until(() -> log.lines().stream()
                    .anyMatch(line -> line.contains("already settled or given back")));
            lines = log.lines();
        }

        assertThat(lines).filteredOn(line -> line.startsWith("WARN") && line.contains("inbox rows it claimed"))
                .as("no takeover said: no other instance took the rows").isEmpty();
        assertThat(worker.fencedCount()).isZero();
    }

    /** A marked statement runs and commits; its answer is lost once, as a broken connection loses it. */
    private DataSource losingAnswers(DataSource real) {
        return proxy(DataSource.class, real, (method, args, result) -> method.getName().equals("getConnection")
                ? proxy(Connection.class, result, (m, a, statement) -> m.getName().equals("prepareStatement")
                        ? losingItsAnswer((String) a[0], (PreparedStatement) statement) : statement)
                : result);
    }

    private PreparedStatement losingItsAnswer(String sql, PreparedStatement statement) {
        return proxy(PreparedStatement.class, statement, (method, args, result) -> {
            String marker = loseTheNextAnswerOf.get();
            if (method.getName().startsWith("execute") && marker != null && sql.contains(marker)
                    && loseTheNextAnswerOf.compareAndSet(marker, null)) {
                if (result instanceof ResultSet answer) {
                    answer.close();
                }
                throw new SQLException("An I/O error occurred while sending to the backend.", "08006");
            }
            return result;
        });
    }

    /** What a call on a proxied object returns, given what the real one returned. */
    private interface Answer {
        Object of(Method method, Object[] args, Object result) throws SQLException;
    }

    private static <T> T proxy(Class<T> type, Object real, Answer answer) {
        InvocationHandler handler = (p, method, args) -> {
            try {
                return answer.of(method, args, method.invoke(real, args));
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[]{type}, handler));
    }
}
