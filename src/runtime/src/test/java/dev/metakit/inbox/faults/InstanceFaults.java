package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxAudit;
import dev.metakit.inbox.support.InboxProcess;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Instances of the shaded jar on one PostgreSQL that die or stand still while they hold claimed rows, with the
 * settings a user gets (the 120 s lease included: none of these recoveries may wait for it). Each instance has its own
 * {@code METAKIT_INSTANCE_ID}, its database connections carry that name ({@code application_name}, which
 * {@link InboxAudit} records with every claim and every outcome), and its own address of the MetaKit double, which
 * holds its answers while the test wants the instance's claims in flight. The bound: 10 s. The faults are split over
 * classes so that their test JVMs run them side by side (each JVM its own database).
 */
abstract class InstanceFaults {
    static final int ACCOUNTS = 10;
    static final Duration RECOVERY = Duration.ofSeconds(10);

    @TempDir
    Path workDir;
    final List<InboxProcess> processes = new ArrayList<>();

    FakeMetaKit metakit;
    InboxAudit audit;
    SignedLoad load;

    @BeforeEach
    void start() {
        metakit = FakeMetaKit.onCleanDatabase(ACCOUNTS);
        audit = InboxAudit.install();
    }

    @AfterEach
    void stop() throws Exception {
        if (load != null) {
            load.stop();
        }
        InboxProcess.closeAll(processes);
        metakit.close();
        audit.close();
    }

    /** An instance as an operator runs it: the defaults, its own instance id; its connections named after it. */
    InboxProcess instance(String id) {
        InboxProcess p = new InboxProcess(workDir, metakit.urlFor(id), Map.of(
                "METAKIT_INSTANCE_ID", id,
                "DATABASE_URL", TestDatabase.jdbcUrl(id)));
        processes.add(p);
        return p;
    }

    void startAll() {
        InboxProcess.startAll(processes);
    }

    /** Waits, at most {@link #RECOVERY} from {@code fromNanos}, until these rows are processed; how long it took. */
    static long millisUntilProcessed(Collection<String> keys, long fromNanos) {
        await().atMost(RECOVERY.minusNanos(System.nanoTime() - fromNanos)).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(unprocessed(keys).size()).as("of %d rows, unprocessed", keys.size())
                        .isZero());
        return Duration.ofNanos(System.nanoTime() - fromNanos).toMillis();
    }

    /**
     * Nothing acked is lost, the backlog drains, nothing failed, every renewal and outcome in the inbox was written by
     * the instance that held the row's claim at that moment, and every row processed under no claim was one a
     * committed catch-up of its account answered for.
     */
    static void assertEveryAckedRowProcessedByTheHolderOfItsClaim(Set<String> acked) {
        Set<String> stored = TestDatabase.strings(TestDatabase.dataSource(), "select delivery_key from webhook_inbox");
        assertThat(stored).as("acked rows stored").containsAll(acked);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> assertThat(unprocessed(stored).size()).as("of %d rows, unprocessed",
                        stored.size()).isZero());
        assertThat(TestDatabase.scalar("select count(*) from webhook_inbox where failed_at is not null")).isZero();
        assertThat(InboxAudit.writesWithoutTheClaim()).as("writes by an instance not holding the row's claim")
                .isEmpty();
        assertThat(InboxAudit.settledWithoutACatchUp()).as("rows processed under no claim, no catch-up's").isEmpty();
    }

    /** The rows pending under a claim this instance made (still the row's current claim). */
    static Set<String> heldBy(String instance) throws SQLException {
        return keys("""
                select w.delivery_key from webhook_inbox w
                 where w.processed_at is null and w.failed_at is null
                   and exists (select 1 from test_inbox_audit c
                                where c.kind = 'claim' and c.instance = ? and c.delivery_key = w.delivery_key
                                  and c.claim = coalesce(to_jsonb(w)->>'claim_token', w.claimed_by))""", instance);
    }

    static Set<String> unprocessed(Collection<String> keys) throws SQLException {
        return keys("select delivery_key from webhook_inbox where processed_at is null and delivery_key = any(?)",
                keys);
    }

    static TreeSet<Long> accountsOf(Collection<String> keys) throws SQLException {
        TreeSet<Long> accounts = new TreeSet<>();
        keys("select distinct account_id::text from webhook_inbox where delivery_key = any(?)", keys)
                .forEach(a -> accounts.add(Long.parseLong(a)));
        return accounts;
    }

    /** Which instances marked these rows processed, with how many each. */
    static Map<String, Long> processedBy(Collection<String> keys) throws SQLException {
        Map<String, Long> by = new java.util.TreeMap<>();
        keys("select instance || '=' || count(*) from test_inbox_audit where kind = 'processed'"
                + " and delivery_key = any(?) group by instance", keys)
                .forEach(s -> by.put(s.substring(0, s.indexOf('=')), Long.parseLong(s.substring(s.indexOf('=') + 1))));
        return by;
    }

    static Set<String> keys(String sql, Object... params) throws SQLException {
        try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                if (params[i] instanceof Collection<?> values) {
                    ps.setArray(i + 1, c.createArrayOf("text", values.toArray()));
                } else {
                    ps.setObject(i + 1, params[i]);
                }
            }
            Set<String> out = new HashSet<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
            return out;
        }
    }
}
