package dev.metakit.inbox.ingest;

import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The writers' bound counts from a delivery's arrival: what waited past it is refused before any commit, an insert is
 * cancelled at its batch's first deadline, and the writer says it is saturated once the oldest delivery waiting for it
 * has waited half the bound. The default bound (2 s) and one writer thread, on the test database; "saturated" is a
 * lock the test holds on the inbox table, so every insert waits.
 */
class InboxWriterTest {
    private static final long TIMEOUT_MILLIS = 2000;
    private static final String WAITING_INSERTS = " from pg_stat_activity where wait_event_type = 'Lock'"
            + " and query like 'insert into webhook_inbox%'";
    private InboxWriter writer;

    @BeforeEach
    void start() {
        TestDatabase.truncateAll();
        writer = new InboxWriter(TestDatabase.dataSource(), TIMEOUT_MILLIS, 256, 1);
    }

    @AfterEach
    void stop() {
        writer.close();
    }

    @Test
    void aDeliveryThatWaitedPastTheBoundBeforeItsStoreIsRefusedWithoutACommit() {
        long arrivedLongAgo = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS + 1);

        assertThatThrownBy(() -> writer.store(delivery("late"), arrivedLongAgo))
                .isInstanceOf(InboxOverloadedException.class);
        assertThat(writer.store(delivery("on-time"), System.nanoTime())).isTrue();
        assertThat(TestDatabase.strings(TestDatabase.dataSource(), "select delivery_key from webhook_inbox"))
                .containsExactly("on-time");
    }

    @Test
    void behindAnInsertThatCannotCommitTheWriterIsSaturatedAndCommitsNothingPastTheDeadline() throws Exception {
        try (Connection lock = everyInsertWaits()) {
            long arrived = System.nanoTime();
            CompletableFuture<Boolean> first = writer.submit(delivery("first"), arrived);
            await().atMost(Duration.ofSeconds(5)).until(() -> scalar("select count(*)" + WAITING_INSERTS) == 1);
            assertThat(writer.saturated()).as("nothing waits for the writer yet").isFalse();

            // one that arrived half the bound ago waits behind the insert under way
            CompletableFuture<Boolean> behind = writer.submit(delivery("behind"),
                    System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS / 2 + 1));
            assertThat(writer.saturated()).as("the oldest waiting has waited half the bound").isTrue();

            assertThatThrownBy(first::join).isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(InboxOverloadedException.class);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - arrived)).as("answered at its deadline")
                    .isGreaterThanOrEqualTo(TIMEOUT_MILLIS);
            assertThatThrownBy(behind::join).isInstanceOf(CompletionException.class);
            await().atMost(Duration.ofSeconds(5)).until(() -> scalar("select count(*)" + WAITING_INSERTS) == 0);
            lock.rollback();
        }
        // an insert cancelled at its deadline is the overload, not a failure of the database (after which the writer
        // refuses everything for a second): the next delivery is stored at once
        assertThat(writer.store(delivery("after"), System.nanoTime())).isTrue();
        assertThat(TestDatabase.strings(TestDatabase.dataSource(), "select delivery_key from webhook_inbox"))
                .as("nothing committed for the deliveries answered 503").containsExactly("after");
    }

    @Test
    void anInsertWhoseCancelNeverReachedItsStatementIsCancelledAgainAndCommitsNothing() throws Exception {
        InboxWriter cancelLost = new InboxWriter(withTheQueryTimeoutLost(TestDatabase.dataSource()), TIMEOUT_MILLIS,
                256, 1);
        try (Connection lock = everyInsertWaits()) {
            long arrived = System.nanoTime();
            CompletableFuture<Boolean> stored = cancelLost.submit(delivery("lost-cancel"), arrived);
            await().atMost(Duration.ofSeconds(5)).until(() -> scalar("select count(*)" + WAITING_INSERTS) == 1);

            assertThatThrownBy(stored::join).as("answered at its deadline").isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(InboxOverloadedException.class);
            // sent again LateInsertCancels.AGAIN_AFTER_MILLIS past the deadline; without it the insert waits as long
            // as the lock is held (released only after this wait), so the bound leaves a loaded machine room
            await().atMost(Duration.ofSeconds(10)).until(() -> scalar("select count(*)"
                    + WAITING_INSERTS) == 0);
            lock.rollback();
        } finally {
            cancelLost.close();
        }
        assertThat(TestDatabase.strings(TestDatabase.dataSource(), "select delivery_key from webhook_inbox"))
                .as("nothing committed for a delivery answered 503").isEmpty();
    }

    @Test
    void forASecondAfterTheDatabaseFailedABatchDeliveriesAreRefusedAtOnceThenItIsTriedAgain() throws Exception {
        AtomicLong clock = new AtomicLong(1_000_000);
        InboxWriter unreachable = new InboxWriter(nothingListening(), TIMEOUT_MILLIS, 256, 1, clock::get);
        try {
            assertThatThrownBy(() -> unreachable.store(delivery("first"), System.nanoTime()))
                    .isInstanceOf(InboxUnavailableException.class).hasMessageStartingWith("inbox commit failed: ");

            // within the second: refused before submit returns, no batch and no wait for a commit timeout of its own
            CompletableFuture<Boolean> next = unreachable.submit(delivery("next"), System.nanoTime());
            assertThat(next).isCompletedExceptionally();
            assertThatThrownBy(next::join).hasCauseInstanceOf(InboxUnavailableException.class)
                    .hasMessageContaining("inbox database unavailable");

            // a second on, the next delivery goes to the database again (and fails there, as it is still away)
            clock.addAndGet(TimeUnit.SECONDS.toNanos(1));
            assertThatThrownBy(() -> unreachable.store(delivery("probe"), System.nanoTime()))
                    .isInstanceOf(InboxUnavailableException.class).hasMessageStartingWith("inbox commit failed: ");
        } finally {
            unreachable.close();
        }
    }

    /** A transaction holding a lock on the inbox table that every insert waits for, until it is rolled back. */
    private static Connection everyInsertWaits() throws SQLException {
        Connection lock = TestDatabase.dataSource().getConnection();
        try (Statement s = lock.createStatement()) {
            lock.setAutoCommit(false);
            s.execute("lock table webhook_inbox in share row exclusive mode");
        } catch (SQLException | RuntimeException e) {
            lock.close();
            throw e;
        }
        return lock;
    }

    /**
     * The test database as a driver whose query timeout never reaches the server (as when PostgreSQL drops a cancel
     * that arrives before the statement): statements ignore {@code setQueryTimeout} and are not pgjdbc's to unwrap;
     * the connection still is, so a cancel sent on it reaches the server.
     */
    private static DataSource withTheQueryTimeoutLost(DataSource real) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    Object result = invoke(real, method, args);
                    return result instanceof Connection c ? connectionLosingTimeouts(c) : result;
                });
    }

    private static Connection connectionLosingTimeouts(Connection real) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    Object result = invoke(real, method, args);
                    return result instanceof PreparedStatement ps ? statementLosingTimeout(ps) : result;
                });
    }

    private static PreparedStatement statementLosingTimeout(PreparedStatement real) {
        return (PreparedStatement) Proxy.newProxyInstance(PreparedStatement.class.getClassLoader(),
                new Class<?>[] {PreparedStatement.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "setQueryTimeout" -> null;
                    case "isWrapperFor" -> false;
                    default -> invoke(real, method, args);
                });
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** A PostgreSQL address where nothing listens: every connection is refused. */
    private static DataSource nothingListening() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl("jdbc:postgresql://127.0.0.1:" + port + "/metakit");
        dataSource.setConnectTimeout(2);
        return dataSource;
    }

    private static Delivery delivery(String key) {
        return new Delivery(key, "position.opened", 1L,
                ("{\"event\":\"position.opened\",\"account_id\":1,\"data\":{\"ticket\":1}}")
                        .getBytes(StandardCharsets.UTF_8), java.time.Instant.now());
    }
}
