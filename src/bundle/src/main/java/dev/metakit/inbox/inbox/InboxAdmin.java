package dev.metakit.inbox.inbox;

import dev.metakit.inbox.db.DayPartitions;
import dev.metakit.inbox.db.Jdbc;
import dev.metakit.inbox.db.Rows;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The operators' statements on the inbox: replay, requeue of dead letters, retention, and what the ops page and the
 * metrics read. None waits on a worker: a row under a live lease is left to the run that holds it.
 */
public class InboxAdmin {
    /**
     * Rows made pending again: {@code inbox_pending_since} moves back to the oldest of them in the same statement, so
     * the claim's next look takes them in (InboxClaims). The statement answers how many rows.
     */
    private static String pendingAgain(String update) {
        return "with again as (" + update + " returning signed_at),"
                + " back as (update inbox_pending_since set since = (select min(signed_at) from again)"
                + " where since > (select min(signed_at) from again))"
                + " select count(*) from again";
    }

    /** Puts rows back as never worked; a row under a live lease is left to the run that holds it (it is current). */
    private static final String REPLAY = pendingAgain("""
            update webhook_inbox
               set processed_at = null, failed_at = null, attempts = 0, next_attempt_at = now(), last_error = null,
                   claimed_by = null, claim_token = null, claimed_until = null, replayed_at = now()
             where (cast(? as bigint) is null or account_id = ?)
               and (cast(? as timestamptz) is null or received_at >= ?)
               and (cast(? as timestamptz) is null or received_at < ?)
               and (claimed_until is null or claimed_until < now())""");

    private static final String REQUEUE_FAILED = pendingAgain("""
            update webhook_inbox set failed_at = null, attempts = 0, next_attempt_at = now()
             where failed_at is not null and processed_at is null
               and (cast(? as bigint) is null or account_id = ?)
               and (cast(? as text) is null or delivery_key = ?)""");

    /**
     * What a day of the inbox holds when its time is up: pending rows, which the day waits for (the worker processes
     * them where they are: a backlog is never copied), and failed rows, the dead letters, which move into the leftover
     * partition when the day is dropped, to wait for an operator.
     */
    public static final DayPartitions.Unfinished UNFINISHED = new DayPartitions.Unfinished(
            "processed_at is null and failed_at is null", "processed_at is null and failed_at is not null");

    /**
     * One bounded batch of a partition of the rows of dropped days, the kept or the leftover one (the days are dropped
     * whole: DayPartitions); SKIP LOCKED so pruning never waits on (or blocks) a worker.
     */
    private static String pruneBatch(String partition) {
        return "delete from " + partition + " where (delivery_key, signed_at) in ("
                + " select delivery_key, signed_at from " + partition
                + " where processed_at is not null and failed_at is null and received_at < ?"
                + " limit ? for update skip locked)";
    }

    /**
     * The deliveries received, and processed, per minute of the last hour, among those signed in the last day: the
     * bound on the partition key prunes the scan to today's and yesterday's partitions (as the statement starts), so it
     * never reads the days retained before them. A delivery is received within the signature's tolerance of its t
     * (minutes), so none received in the hour is left out; a backlog of older deliveries processed in the hour (after
     * an outage) is not counted here, the backlog falling says it.
     */
    private static final String THROUGHPUT = """
            select to_char(m at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI"Z"') as minute,
                   sum(received)::int as received, sum(processed)::int as processed
              from (select date_trunc('minute', received_at) m, 1 received, 0 processed from webhook_inbox
                     where received_at > now() - interval '1 hour' and signed_at > now() - interval '1 day'
                    union all
                    select date_trunc('minute', processed_at), 0, 1 from webhook_inbox
                     where processed_at > now() - interval '1 hour' and signed_at > now() - interval '1 day') x
             group by m order by m""";

    private static final String RECENT_FAILURES = """
            select delivery_key as key, account_id as "accountId", event, attempts, last_error as "lastError",
                   failed_at as "failedAt"
              from webhook_inbox where processed_at is null and failed_at is not null
             order by failed_at desc limit 100""";

    /**
     * The rows retained, as PostgreSQL's statistics estimate them for each partition (pg_class.reltuples, kept
     * current by autovacuum and analyze): a count(*) would read every row of a week.
     */
    private static final String RETAINED_ESTIMATE = """
            select coalesce(sum(greatest(c.reltuples, 0)), 0)::bigint
              from pg_inherits i join pg_class c on c.oid = i.inhrelid
             where i.inhparent = to_regclass('webhook_inbox')""";

    private final DataSource dataSource;

    public InboxAdmin(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * Puts failed rows back in the queue with a fresh attempt count: those of one account ({@code null}: every
     * account), or the one row of {@code deliveryKey} ({@code null}: every row). Returns how many.
     */
    public int requeueFailed(Long account, String deliveryKey) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(REQUEUE_FAILED)) {
            Jdbc.setLong(ps, 1, account);
            Jdbc.setLong(ps, 2, account);
            ps.setString(3, deliveryKey);
            ps.setString(4, deliveryKey);
            return count(ps);
        }
    }

    /**
     * Puts the rows of one account ({@code null}: every account) received in {@code [from, to)} (either bound may be
     * null) back as never worked; a row under a live lease is left to the run that holds it. Returns how many.
     */
    public int replay(Long account, Instant from, Instant to) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(REPLAY)) {
            Jdbc.setLong(ps, 1, account);
            Jdbc.setLong(ps, 2, account);
            Jdbc.setInstant(ps, 3, from);
            Jdbc.setInstant(ps, 4, from);
            Jdbc.setInstant(ps, 5, to);
            Jdbc.setInstant(ps, 6, to);
            return count(ps);
        }
    }

    private static int count(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /**
     * Deletes the kept and leftover partitions' processed rows received before {@code cutoff}, {@code batchSize} rows per
     * statement until none is left; failed and unprocessed rows are kept. Returns how many rows.
     */
    public long prune(Instant cutoff, int batchSize, Jdbc.Progress progress) throws SQLException {
        long n = 0;
        try (Connection c = dataSource.getConnection()) {
            for (String partition : List.of(DayPartitions.INBOX.kept(), DayPartitions.INBOX.leftover())) {
                if (!Jdbc.relationExists(c, partition)) {
                    continue; // the leftover partition is made when a dropped day first leaves a row
                }
                long before = n;
                try (PreparedStatement ps = c.prepareStatement(pruneBatch(partition))) {
                    ps.setTimestamp(1, Timestamp.from(cutoff));
                    ps.setInt(2, batchSize);
                    n += Jdbc.deleteInBatches(ps, batchSize, soFar -> progress.done(before + soFar));
                }
            }
        }
        return n;
    }

    /** Received and processed rows per minute over the last hour, for the ops page. */
    public List<Map<String, Object>> throughputLastHour() throws SQLException {
        return Rows.read(dataSource, THROUGHPUT);
    }

    /** About how many rows the inbox retains: an estimate from the statistics, in constant time. */
    public long retainedEstimate() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(RETAINED_ESTIMATE);
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The 100 most recently failed rows, newest first, for the ops page. */
    public List<Map<String, Object>> recentFailures() throws SQLException {
        return Rows.read(dataSource, RECENT_FAILURES);
    }

    /**
     * Rows neither processed nor failed, rows failed, and how long the oldest pending row has waited since it was
     * stored or put back (a replay, a requeue). A count is exact up to {@value #COUNTED_UP_TO} rows and PostgreSQL's
     * estimate beyond (the partial index's entries as its last vacuum or analyze counted them, at least that many).
     */
    public record Backlog(long pending, long failed, Duration oldestPendingAge) {
    }

    /** How many rows a backlog count reads at most: the meters refresh every few seconds, whatever the backlog. */
    public static final int COUNTED_UP_TO = 10_000;

    /** A pending row of {@code webhook_inbox w}, in the days where pending rows are (InboxClaims). */
    private static final String PENDING = "w.processed_at is null and w.failed_at is null"
            + " and w.signed_at >= inbox_pending_from()";

    /**
     * The counts read at most {@value #COUNTED_UP_TO} + 1 rows each, beside the partial indexes' estimates; the oldest
     * row is found account by account (a walk over the accounts with pending rows, each one index probe, and its
     * first row in {@code next_attempt_at} order): its cost follows the accounts, not the rows. An account's rows
     * that its catch-up settled (up to {@code inbox_account_settled.through}, marked processed by the worker
     * shortly after) are no backlog: each account's rows are read from there on, on its index, never past them.
     */
    private static final String BACKLOG = """
            with recursive walk (account_id) as (
                select (select w.account_id from webhook_inbox w where %1$s and w.account_id is not null
                         order by w.account_id limit 1)
                union all
                select (select w.account_id from webhook_inbox w where %1$s and w.account_id > k.account_id
                         order by w.account_id limit 1)
                  from walk k where k.account_id is not null),
            accounts as (
                select k.account_id, coalesce((select s.through from inbox_account_settled s
                                                where s.account_id = k.account_id), '-infinity') as through
                  from walk k where k.account_id is not null)
            select (select count(*) from (
                        select 1 from accounts a
                         cross join lateral (select 1 from webhook_inbox w
                                              where %1$s and w.account_id = a.account_id
                                                and w.next_attempt_at > a.through limit %2$d) r
                        union all
                        select 1 from webhook_inbox w where %1$s and w.account_id is null
                        limit %2$d) p),
                   (select count(*) from (select 1 from webhook_inbox w
                                           where w.processed_at is null and w.failed_at is not null limit %2$d) f),
                   (select coalesce(sum(greatest(c.reltuples, 0)), 0) from pg_inherits i
                      join pg_class c on c.oid = i.inhrelid
                     where i.inhparent = to_regclass('webhook_inbox_pending_account_idx')),
                   (select coalesce(sum(greatest(c.reltuples, 0)), 0) from pg_inherits i
                      join pg_class c on c.oid = i.inhrelid
                     where i.inhparent = to_regclass('webhook_inbox_failed_idx')),
                   coalesce(extract(epoch from now() - least(
                       (select min((select w.next_attempt_at from webhook_inbox w
                                     where %1$s and w.account_id = a.account_id and w.next_attempt_at > a.through
                                     order by w.next_attempt_at limit 1))
                          from accounts a),
                       (select w.next_attempt_at from webhook_inbox w where %1$s and w.account_id is null
                         order by w.next_attempt_at limit 1))), 0)
            """.formatted(PENDING, COUNTED_UP_TO + 1);

    /** What the meters and the ops page show of the backlog, in bounded time whatever its size. */
    public Backlog backlog() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(BACKLOG);
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return new Backlog(countOrEstimate(rs.getLong(1), rs.getDouble(3)),
                    countOrEstimate(rs.getLong(2), rs.getDouble(4)),
                    Duration.ofMillis((long) (rs.getDouble(5) * 1000)));
        }
    }

    private static long countOrEstimate(long counted, double estimate) {
        return counted <= COUNTED_UP_TO ? counted : Math.max(counted, (long) estimate);
    }
}
