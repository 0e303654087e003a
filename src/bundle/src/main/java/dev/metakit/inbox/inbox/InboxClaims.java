package dev.metakit.inbox.inbox;

import dev.metakit.inbox.db.DayPartitions;
import dev.metakit.inbox.db.Jdbc;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The worker's statements on the inbox: the inbox seen as a work queue, and {@code inbox_account_backoff}, which only
 * the claims and their outcomes use. Rows are claimed by a {@link Claimant} (an instance's boot) with a lease
 * ({@code FOR UPDATE SKIP LOCKED}, so instances on one database never claim the same row at once). A claimed row is
 * claimable again as soon as the boot that claimed it stops beating ({@link InstanceLiveness}: no heartbeat for
 * {@code deadAfter} on the database's clock), or, last resort for a boot alive but stuck, once its lease ran out.
 * Every outcome write (processed, failed, backoff, renewal, release) takes effect only on rows the boot still holds:
 * one whose claims were taken over (it was paused) writes nothing for them, and its methods say how many rows they
 * wrote. A row ends processed, or failed with its error, never silently dropped. The ingest's statements are
 * {@link InboxIntake}'s, the operators' {@link InboxAdmin}'s.
 */
public class InboxClaims {
    private static final int MAX_ERROR_LENGTH = 500;
    /** How long a boot may go without a heartbeat before its claims are anyone's. */
    public static final Duration DEFAULT_DEAD_AFTER = Duration.ofSeconds(5);

    /*
     * A claim takes whole accounts, found by account, never by row: a walk over the accounts that have pending rows
     * (one index probe each on webhook_inbox_pending_account_idx, in account order from where this instance's last
     * claim stopped, round and round), leaving out accounts backing off (their one row in inbox_account_backoff) and
     * those this instance is still working, up to {@code limit} accounts with a claimable row. The claim is then
     * every due row of those accounts, at most {@code maxRows}, whole accounts first in the order the walk met them,
     * plus up to {@code limit} due rows without an account; an account whose backoff ran out gives its first due row
     * alone (its probe: the rest wait until a reconcile of it commits). So a claim reads one index entry per account
     * it passes, whatever the backlog of an account backing off: the rows of an account that is not due are never
     * read. Both parts lock with SKIP LOCKED and take only rows that are due and not leased: a row claimed elsewhere
     * stays where it is.
     */
    /**
     * The days a claim looks in, as a condition on {@code webhook_inbox w}'s partition key, so that the partitions
     * outside are pruned as the statement starts (stable functions, no subquery): from where pending rows begin
     * ({@code inbox_pending_from()}: {@code inbox_pending_since}'s row, which {@link #advancePendingSince} moves up and
     * a replay or requeue moves back; the first partition without it) to a day ahead (an ingested delivery is signed
     * within the tolerance of now, at most an hour; a row beyond is claimed once it is within the day). A claim's cost
     * so follows the days that hold pending rows, not the week retained nor the days made ahead.
     */
    private static final String PENDING_DAYS = " " + """
            w.signed_at >= inbox_pending_from() and w.signed_at < now() + interval '1 day'""";

    /**
     * A row of {@code webhook_inbox w} a claim may take: due, and not leased, or leased by a boot that no longer beats
     * (needs the CTE {@code live} of {@link InstanceLiveness#LIVE_TOKENS}).
     */
    private static final String CLAIMABLE = PENDING_DAYS + """
             and w.processed_at is null and w.failed_at is null and w.next_attempt_at <= now()
            and (w.claimed_until is null or w.claimed_until < now()
                 or (w.claim_token is not null
                     and not exists (select 1 from live where live.boot_token = w.claim_token)))""";

    /** The first account with a pending row after {@code after} (and up to the walk's start, on its second lap). */
    private static String nextAccount(String after, String upToStart) {
        return """
                (select w.account_id from webhook_inbox w
                  where""" + PENDING_DAYS + " and w.processed_at is null and w.failed_at is null and w.account_id "
                + after + upToStart + """

                  order by w.account_id limit 1)""";
    }

    private static final String UP_TO_START = " and w.account_id <= (select start from walk_start)";

    private static final String CLAIM = """
            with recursive live as (""" + InstanceLiveness.LIVE_TOKENS + """
            ),
            walk_start as (select ?::bigint as start),
            -- the accounts after the walk's start, then (the second lap) those up to it
            after_start (account_id) as (
                select""" + nextAccount("> (select start from walk_start)", "") + """
                union all
                select""" + nextAccount("> a.account_id", "") + """
                  from after_start a where a.account_id is not null),
            up_to_start (account_id) as (
                select""" + nextAccount(">= -9223372036854775808", UP_TO_START) + """
                union all
                select""" + nextAccount("> a.account_id", UP_TO_START) + """
                  from up_to_start a where a.account_id is not null),
            walk as (select account_id from after_start where account_id is not null
                     union all
                     select account_id from up_to_start where account_id is not null),
            due_accounts as (
                -- probe: the account's backoff ran out, so its reconcile failed the last time; its retry claims one
                -- row, the first due, to ring for one reconcile, and the rest of its rows wait for that to commit:
                -- a retry that fails again writes that row and the account's, whatever the account's backlog
                select k.account_id, s.through,
                       exists (select 1 from inbox_account_backoff b where b.account_id = k.account_id) as probe
                  from walk k
                 -- the rows a retry settled whole (up to inbox_account_settled.through) are no one's to claim: the
                 -- scans below start after them on the account's index
                 cross join lateral (
                     select coalesce((select s.through from inbox_account_settled s where s.account_id = k.account_id),
                                     '-infinity') as through) s
                 -- one probe for a claimable row of the account (LATERAL ... LIMIT 1: never a join over every
                 -- pending row, which the planner makes of an EXISTS; the order keeps it on the account's index
                 -- when the statistics say most rows are one account's)
                 cross join lateral (
                     select 1 from webhook_inbox w
                      where w.account_id = k.account_id and w.next_attempt_at > s.through and""" + CLAIMABLE + """

                      order by w.next_attempt_at
                      limit 1) due
                 -- an account this instance is still working: its new rows wait for the claim after that work
                 where k.account_id <> all(?)
                   -- an account backing off: all its rows, those that arrived since its failure too, wait for it
                   and not exists (select 1 from inbox_account_backoff b
                                     where b.account_id = k.account_id and b.retry_at > now())
                 limit ?),
            same_accounts as (
                -- one index scan per account, in the walk's order; the limit stops the scans (and their locks) once
                -- the cap is reached
                select k.delivery_key, k.signed_at from due_accounts a
                 cross join lateral (
                     select w.delivery_key, w.signed_at from webhook_inbox w
                      where w.account_id = a.account_id and w.next_attempt_at > a.through and""" + CLAIMABLE + """

                      order by w.next_attempt_at
                      limit case when a.probe then 1 else ? end
                      for update skip locked) k
                 limit ?),
            without_account as (
                select w.delivery_key, w.signed_at from webhook_inbox w
                 where w.account_id is null and""" + CLAIMABLE + """

                 order by w.next_attempt_at
                 limit ?
                 for update skip locked),
            c as (select delivery_key, signed_at from same_accounts
                  union select delivery_key, signed_at from without_account),
            -- the claimed rows' keys as two arrays, in one pass (so their elements pair up)
            claimed as (select array_agg(delivery_key) as keys, array_agg(signed_at) as signed from c)
            -- joined row by row, as InboxKey.ROWS does: a primary key probe per row in the one partition of its
            -- signed_at, pruned as the statement runs (by arrays of keys, every partition's primary key was probed
            -- for every key, the claim's largest cost with a backlog across a retained week)
            update webhook_inbox i
               set claimed_by = ?, claim_token = ?, claimed_until = now() + ?::interval, attempts = i.attempts + 1
              from claimed, unnest(claimed.keys, claimed.signed) as k(delivery_key, signed_at)
             where i.delivery_key = k.delivery_key and i.signed_at = k.signed_at
            returning i.delivery_key, i.event, i.account_id, i.body, i.body_raw, i.attempts,
                      i.replayed_at is not null, i.trace_parent, i.signed_at,
                      coalesce((select b.failures from inbox_account_backoff b where b.account_id = i.account_id), 0),
                      -- a retry's probe with a backlog of the account behind it (more than ? rows, not yet settled):
                      -- its reconcile settles them all, given the claim's time (the database's clock) and where
                      -- pending rows begin (the window they can name)
                      case when exists (select 1 from inbox_account_backoff b where b.account_id = i.account_id)
                           then exists (select 1 from webhook_inbox w
                                         where w.account_id = i.account_id and""" + PENDING_DAYS + """

                                           and w.processed_at is null and w.failed_at is null
                                           and w.next_attempt_at > coalesce((select s.through
                                                 from inbox_account_settled s where s.account_id = i.account_id),
                                               '-infinity')
                                         offset ?)
                           else false end,
                      now(), inbox_pending_from()""";

    /*
     * Every statement on rows a boot holds names them by key and signed_at ({@link InboxKey#ROWS}): PostgreSQL joins
     * them to the inbox one row at a time and looks each up in its own partition (pruned as the statement runs), so a
     * statement costs one primary key probe per row, whatever the number of days retained; by key alone it probed the
     * primary key of every partition for every key.
     */
    /** The rows of {@link InboxKey#ROWS} as {@code webhook_inbox w}. */
    private static final String HELD = " from " + InboxKey.ROWS + """

             where w.delivery_key = k.delivery_key and w.signed_at = k.signed_at and w.claim_token = ?""";

    private final DataSource dataSource;
    private final Duration deadAfter;
    /** This instance's walk over the accounts starts after this one (each instance has its own InboxClaims). */
    private volatile long walkStart = Long.MIN_VALUE;

    public InboxClaims(DataSource dataSource) {
        this(dataSource, DEFAULT_DEAD_AFTER);
    }

    /** {@code deadAfter}: how long a boot goes without a heartbeat before its claims are free for others. */
    public InboxClaims(DataSource dataSource, Duration deadAfter) {
        this.dataSource = dataSource;
        this.deadAfter = deadAfter;
    }

    /** Claims the due rows of the next {@code limit} due accounts, at most 10 × {@code limit} rows. */
    public List<InboxRow> claim(Claimant owner, int limit, Duration lease) throws SQLException {
        return claim(owner, limit, 10 * limit, lease);
    }

    /**
     * Claims the due rows of the next {@code limit} accounts that have any (in account order, from where the last
     * claim stopped), at most {@code maxRows} of them, and up to {@code limit} due rows without an account, each with a
     * lease and one attempt more.
     */
    public List<InboxRow> claim(Claimant owner, int limit, int maxRows, Duration lease) throws SQLException {
        return claim(owner, limit, maxRows, lease, Set.of());
    }

    /** As {@link #claim(Claimant, int, int, Duration)}, leaving out the rows of {@code busyAccounts}. */
    public List<InboxRow> claim(Claimant owner, int limit, int maxRows, Duration lease, Set<Long> busyAccounts)
            throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(CLAIM)) {
            int cap = Math.max(maxRows, limit);
            long start = walkStart;
            ps.setString(1, Jdbc.interval(deadAfter));
            ps.setLong(2, start);
            ps.setArray(3, c.createArrayOf("bigint", busyAccounts.toArray()));
            ps.setInt(4, limit);
            ps.setInt(5, cap);
            ps.setInt(6, cap);
            ps.setInt(7, limit);
            ps.setString(8, owner.instanceId());
            ps.setObject(9, owner.bootToken());
            ps.setString(10, Jdbc.interval(lease));
            ps.setInt(11, CATCH_UP_BEHIND);
            List<InboxRow> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String text = rs.getString(4);
                    byte[] body = text != null ? text.getBytes(StandardCharsets.UTF_8) : rs.getBytes(5);
                    long account = rs.getLong(3);
                    // wasNull right after the read it is about: a null account_id must not become account 0
                    Long accountId = rs.wasNull() ? null : account;
                    rows.add(new InboxRow(rs.getString(1), rs.getString(2), accountId, body, rs.getInt(6),
                            rs.getBoolean(7), rs.getString(8),
                            rs.getObject(9, java.time.OffsetDateTime.class).toInstant(), rs.getInt(10),
                            rs.getBoolean(11) ? new InboxRow.Backlog(finite(rs, 12), finite(rs, 13)) : null));
                }
            }
            walkStart = nextWalkStart(start, rows, cap);
            return rows;
        }
    }

    /** A timestamptz column as an instant; null for SQL null and for -infinity (no time before it). */
    private static Instant finite(ResultSet rs, int column) throws SQLException {
        java.time.OffsetDateTime at = rs.getObject(column, java.time.OffsetDateTime.class);
        return at == null || at.equals(java.time.OffsetDateTime.MIN) ? null : at.toInstant();
    }

    /**
     * Where the next claim's walk starts: after the last account this one took, in walk order (after {@code start},
     * then round to it), so every account with due rows has its turn; just before it when the cap may have cut its
     * rows short, so the next claim takes the rest first.
     */
    private static long nextWalkStart(long start, List<InboxRow> rows, int cap) {
        long last = start;
        boolean any = false;
        boolean wrapped = false;
        int accountRows = 0;
        for (InboxRow row : rows) {
            Long account = row.accountId();
            if (account == null) {
                continue;
            }
            accountRows++;
            boolean secondLap = account <= start;
            if (!any || (secondLap && !wrapped) || (secondLap == wrapped && account > last)) {
                last = account;
                wrapped = secondLap;
                any = true;
            }
        }
        if (!any) {
            return start;
        }
        return accountRows >= cap && last > Long.MIN_VALUE ? last - 1 : last;
    }

    /**
     * Moves {@code inbox_pending_since} up to where the pending rows begin: the start of the first partition holding
     * one, and two hours before now at the latest (a delivery signed within the tolerance, at most an hour, is stored
     * after that, the database's clock and the instances' an hour apart at the most; a row stored before it all the
     * same is claimed after the next move). Holds the
     * row's lock while it looks, so a replay or requeue that moves it back meanwhile waits, and writes after it.
     * Returns where pending rows now begin (null: the first partition, which has no lower bound).
     */
    public Instant advancePendingSince() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return Jdbc.inTransaction(c, tx -> {
                Instant latest;
                try (PreparedStatement row = tx.prepareStatement("insert into inbox_pending_since (since)"
                        + " values ('-infinity') on conflict do nothing")) {
                    row.executeUpdate(); // the row, should it be gone: pending rows from the first partition on
                }
                try (PreparedStatement lock = tx.prepareStatement(
                        "select now() - interval '2 hours' from inbox_pending_since for update");
                     ResultSet rs = lock.executeQuery()) {
                    rs.next();
                    latest = rs.getTimestamp(1).toInstant();
                }
                Optional<DayPartitions.Partition> first = DayPartitions.INBOX.firstHolding(tx,
                        InboxAdmin.UNFINISHED.toWork(), latest);
                Instant since = first.isPresent() ? first.get().from() : latest;
                try (PreparedStatement set = tx.prepareStatement(
                        "update inbox_pending_since set since = ?::timestamptz")) {
                    set.setString(1, since == null ? "-infinity" : since.toString());
                    set.executeUpdate();
                }
                return since;
            });
        }
    }

    /**
     * How many of an account's rows must be pending behind its retry's probe for the probe's reconcile to settle them
     * all (a catch-up: one reconcile that reads the account's deals over the backlog's window instead of each row):
     * fewer are claimed and read after the probe, as one claim can take them. Low, because the backlog is drained in
     * one reconcile per account only so (a minute's outage at 1,600 deliveries/s over 100 accounts leaves ~1,000 rows
     * each), and because the claim looks this far behind each probe it returns (a probe with more rows behind than
     * this is one index range read of this length).
     */
    public static final int CATCH_UP_BEHIND = 100;

    /**
     * A join to the first pending row of {@code account} (an SQL expression) that meets {@code condition} (" and ..."
     * on {@code w}, or empty): one probe of the account's pending index, stopping at that row. Where an {@code EXISTS}
     * stood, PostgreSQL made it a semi-join whose bitmap scans read every such row of every account (a backlog's
     * worth per account: 86 to 123 ms at 150,000 pending rows over 100 accounts, against 1 to 12 ms so).
     */
    private static String firstPendingRow(String account, String condition) {
        return "\n cross join lateral (select 1 from webhook_inbox w where w.account_id = " + account + condition
                + " and" + PENDING_DAYS + " and w.processed_at is null and w.failed_at is null"
                + " order by w.next_attempt_at limit 1) pending";
    }

    /**
     * Every account backing off on a delay of the worker's own made due now; one MetaKit asked for (Retry-After) is
     * kept. What MetaKit answering again means for the accounts waiting on it.
     */
    private static final String WAKE_BACKING_OFF = """
            update inbox_account_backoff set retry_at = now() where retry_at > now() and not asked""";

    /**
     * MetaKit answers again ({@code ApiReturnProbe} saw it): every account backing off on a delay of the worker's
     * own is due now, as after a reconcile of one of them went through. Returns how many.
     */
    public int wakeBackingOff() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(WAKE_BACKING_OFF)) {
            return ps.executeUpdate();
        }
    }

    /** How many reconciles of an account must have failed in a row before it may be the canary. */
    public static final int CANARY_AFTER_FAILURES = 3;

    /**
     * During an outage, one account probes for all: the account backing off on the worker's own delay (not one MetaKit
     * asked for) that is due first, after {@link #CANARY_AFTER_FAILURES} failures in a row, with rows pending and more
     * than {@code every} to wait, is made due now. Its retry is then the account's probe: if it fails, it backs off
     * as before; if it goes through, {@link #markProcessed(Claimant, long, Collection)} makes every account waiting
     * due. So the API's return is noticed within {@code every} whatever the accounts' delays (up to the longest
     * backoff), at the cost of one call per {@code every}. Returns the account made due, or null.
     */
    public Long dueCanary(Duration every) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                update inbox_account_backoff set retry_at = now()
                 where account_id = (
                     select b.account_id from inbox_account_backoff b""" + firstPendingRow("b.account_id", "") + """

                      where b.retry_at > now() + ?::interval and not b.asked and b.failures >= ?
                      order by b.retry_at
                      limit 1
                      for update of b skip locked)
                returning account_id""")) {
            ps.setString(1, Jdbc.interval(every));
            ps.setInt(2, CANARY_AFTER_FAILURES);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : null;
            }
        }
    }

    /**
     * Extends the lease of the rows {@code owner} still holds (claimed by this boot, not processed): an instance
     * working on rows longer than the lease keeps them; one stuck stops renewing and its rows are claimed again once
     * the lease runs out. Returns how many leases were extended.
     */
    public int renew(Claimant owner, Collection<InboxKey> keys, Duration lease) throws SQLException {
        return updateHeld("update webhook_inbox w set claimed_until = now() + ?::interval", owner, keys,
                Jdbc.interval(lease));
    }

    /**
     * How many of {@code keys} another boot holds now: rows an outcome write of {@code owner} missed were either taken
     * over (held by another) or already settled or given back (an earlier write of this boot whose answer was lost).
     */
    public int heldByOthers(Claimant owner, Collection<InboxKey> keys) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                "select count(*) from " + InboxKey.ROWS + " join webhook_inbox w on w.delivery_key = k.delivery_key"
                        + " and w.signed_at = k.signed_at where w.claim_token is not null and w.claim_token <> ?")) {
            int next = InboxKey.bind(c, ps, 1, keys);
            ps.setObject(next, owner.bootToken());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** Sets a held row free, due again at once with its attempt back. */
    private static final String GIVE_BACK = """
            update webhook_inbox w set claimed_by = null, claim_token = null, claimed_until = null,
                   attempts = greatest(w.attempts - 1, 0)""";

    /**
     * Gives the claims of {@code keys} that {@code owner} still holds back, with their attempt: the rows are due again
     * at once, for anyone (an instance stopping with work it could not finish). Returns how many.
     */
    public int release(Claimant owner, Collection<InboxKey> keys) throws SQLException {
        return updateHeld(GIVE_BACK, owner, keys);
    }

    /**
     * Gives back, with their attempt, the rows {@code owner} holds other than {@code keep}: those of a claim whose
     * answer never reached it (the connection broke after the commit, as in a failover), which no one works on and
     * which its heartbeat would otherwise keep for the whole lease. Returns how many. Found by the claim's token
     * among the pending rows (it runs after a failed claim only), so {@code keep} is matched by delivery key.
     */
    public int releaseAllBut(Claimant owner, Collection<InboxKey> keep) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(GIVE_BACK + """

                 where w.claim_token = ? and w.processed_at is null and w.failed_at is null
                   and w.delivery_key <> all(?)""")) {
            ps.setObject(1, owner.bootToken());
            ps.setArray(2, c.createArrayOf("text", keep.stream().map(InboxKey::deliveryKey).toArray()));
            return ps.executeUpdate();
        }
    }

    /** Settles a held row processed. */
    private static final String PROCESSED = """
            update webhook_inbox w set processed_at = now(), claimed_by = null, claim_token = null,
                   claimed_until = null, last_error = null""";

    /** Applied (rows that need no reconcile, or whose reconcile committed): the rows {@code owner} still holds. */
    public int markProcessed(Claimant owner, Collection<InboxKey> keys) throws SQLException {
        return updateHeld(PROCESSED, owner, keys);
    }

    /**
     * Applied, after a reconcile of {@code accountId} committed; the account's backoff, which ran out before the
     * claim, goes with it (one set since, by another instance's failure, stays), and then every other account backing
     * off on a delay of the worker's own is due at once: the API answers again (a Retry-After MetaKit sent is kept).
     * Only the rows {@code owner} still holds; if it holds none, no backoff is touched either.
     */
    public int markProcessed(Claimant owner, long accountId, Collection<InboxKey> keys) throws SQLException {
        return markProcessed(owner, accountId, keys, null);
    }

    /**
     * As {@link #markProcessed(Claimant, long, Collection)}, for a reconcile that settled the account's backlog:
     * every pending row of the account with {@code next_attempt_at} at or before {@code settledThrough} (null: none)
     * is settled with them, in one row ({@code inbox_account_settled}) whatever their number; no claim takes them
     * again, and {@link #markSettled} marks them processed later.
     */
    public int markProcessed(Claimant owner, long accountId, Collection<InboxKey> keys, Instant settledThrough)
            throws SQLException {
        return markProcessed(owner, accountId, keys, settledThrough, List.of()).held();
    }

    /** What a committed reconcile marked: the rows its boot held, and the rows it read along (not claimed). */
    public record Applied(int held, int readAlong) {
    }

    /**
     * As {@link #markProcessed(Claimant, long, Collection, Instant)}, and the account's rows {@code readAlong} too:
     * rows after {@code settledThrough} that the reconcile read without claiming them (a catch-up's last moments, whose
     * tickets it took), marked processed unless a claim holds them meanwhile (that claim's reconcile answers for them).
     * Nothing is marked if {@code owner} no longer holds any of {@code keys}.
     */
    public Applied markProcessed(Claimant owner, long accountId, Collection<InboxKey> keys, Instant settledThrough,
                                 Collection<InboxKey> readAlong) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("with done as ("
                + PROCESSED + HELD + """
                 and w.processed_at is null
                    returning 1),
                settled as (insert into inbox_account_settled as s (account_id, through)
                            select ?, ?::timestamptz where ?::timestamptz is not null and exists (select 1 from done)
                            on conflict (account_id) do update set through = greatest(s.through, excluded.through)
                            returning 1),
                over as (delete from inbox_account_backoff where account_id = ? and retry_at <= now()
                            and exists (select 1 from done)
                         returning 1),
                -- a reconcile that had failed went through: MetaKit answers again, so the accounts waiting on a delay
                -- of the worker's own are due now (their retry probes at once); one MetaKit asked for is kept
                woken as (""" + WAKE_BACKING_OFF + """

                           and exists (select 1 from over)),
                along as (""" + PROCESSED + " from " + InboxKey.ROWS + """

                           where w.delivery_key = k.delivery_key and w.signed_at = k.signed_at
                             and w.account_id = ? and w.processed_at is null and w.failed_at is null
                             and (w.claimed_until is null or w.claimed_until < now())
                             and exists (select 1 from done)
                          returning 1)
                select (select count(*) from done), (select count(*) from along)""")) {
            int next = InboxKey.bind(c, ps, 1, keys);
            ps.setObject(next, owner.bootToken());
            ps.setLong(next + 1, accountId);
            Jdbc.setInstant(ps, next + 2, settledThrough);
            Jdbc.setInstant(ps, next + 3, settledThrough);
            ps.setLong(next + 4, accountId);
            next = InboxKey.bind(c, ps, next + 5, readAlong);
            ps.setLong(next, accountId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Applied(rs.getInt(1), rs.getInt(2));
            }
        }
    }

    /**
     * The pending rows of {@code accounts} with {@code next_attempt_at} after {@code after} and at or before
     * {@code upTo}, by account (in account order, each account's in that order), read, not claimed: the recent rows
     * whose tickets the catch-ups of one claim read, in one statement. At most {@code limit} rows in all: when that
     * many came, the last account read may have more, and the accounts after it were not read; {@link Recent#complete}
     * says which accounts' rows are all there.
     */
    public Recent pendingBetween(Collection<Long> accounts, Instant after, Instant upTo, int limit)
            throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                select w.delivery_key, w.event, w.account_id, w.body, w.body_raw, w.signed_at, w.next_attempt_at
                  from webhook_inbox w
                 where w.account_id = any(?) and w.next_attempt_at > ? and w.next_attempt_at <= ? and""" + PENDING_DAYS
                + """

                   and w.processed_at is null and w.failed_at is null
                 order by w.account_id, w.next_attempt_at
                 limit ?""")) {
            ps.setArray(1, c.createArrayOf("bigint", accounts.toArray()));
            Jdbc.setInstant(ps, 2, after);
            Jdbc.setInstant(ps, 3, upTo);
            ps.setInt(4, limit);
            Map<Long, List<InboxRow>> byAccount = new LinkedHashMap<>();
            Map<InboxKey, Instant> due = new HashMap<>();
            InboxRow last = null;
            int read = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    last = readRow(rs);
                    byAccount.computeIfAbsent(last.accountId(), a -> new ArrayList<>()).add(last);
                    due.put(last.inboxKey(), rs.getObject(7, java.time.OffsetDateTime.class).toInstant());
                    read++;
                }
            }
            return new Recent(byAccount, due, read < limit ? null : last.accountId());
        }
    }

    /**
     * What {@link #pendingBetween} read: the rows by account, each row's {@code next_attempt_at}; {@code cutAt}, the
     * account at which the limit cut the read (null: none), whose rows and those of the accounts after it are not all
     * there.
     */
    public record Recent(Map<Long, List<InboxRow>> rows, Map<InboxKey, Instant> due, Long cutAt) {
        /** Whether every row of {@code account} asked for was read. */
        public boolean complete(long account) {
            return cutAt == null || account < cutAt;
        }

        public List<InboxRow> of(long account) {
            return rows.getOrDefault(account, List.of());
        }

        /** The rows of {@code account} read that are due after {@code through}. */
        public List<InboxRow> after(long account, Instant through) {
            return of(account).stream().filter(r -> due.get(r.inboxKey()).isAfter(through)).toList();
        }
    }

    /** The rows of a select of {@code delivery_key, event, account_id, body, body_raw, signed_at}, as read. */
    private static List<InboxRow> readRows(PreparedStatement ps) throws SQLException {
        List<InboxRow> rows = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                rows.add(readRow(rs));
            }
        }
        return rows;
    }

    private static InboxRow readRow(ResultSet rs) throws SQLException {
        String text = rs.getString(4);
        byte[] body = text != null ? text.getBytes(StandardCharsets.UTF_8) : rs.getBytes(5);
        return new InboxRow(rs.getString(1), rs.getString(2), rs.getLong(3), body, 0,
                rs.getObject(6, java.time.OffsetDateTime.class).toInstant());
    }

    /** What {@link #markSettled} did: rows marked processed, and rows put back to be claimed (dead letters to be). */
    public record Marked(int processed, int putBack) {
        public int total() {
            return processed + putBack;
        }
    }

    /**
     * Marks processed up to {@code limit} of the rows that accounts' catch-ups settled ({@code inbox_account_settled}:
     * pending, at or before the account's {@code through}), those under no running lease. A row {@code usable} refuses
     * (a body no retry can fix, which a claim dead-letters with its reason) is put back instead, due now and so after
     * {@code through}: the next claim takes it and fails it as any claim does. Run in the background until none is
     * left: the settled rows wait for nothing meanwhile (no claim takes them, the backlog counts leave them out), but
     * they keep their day from being dropped and stay in the pending index until then.
     */
    public Marked markSettled(int limit, Predicate<InboxRow> usable) throws SQLException {
        Map<Long, Instant> settled = new LinkedHashMap<>();
        // only the accounts with a settled row still to mark: one probe of the pending index each, in one statement
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                select s.account_id, s.through from inbox_account_settled s"""
                + firstPendingRow("s.account_id", " and w.next_attempt_at <= s.through") + """

                 order by s.account_id""");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                settled.put(rs.getLong(1), rs.getObject(2, java.time.OffsetDateTime.class).toInstant());
            }
        }
        int processed = 0;
        int putBack = 0;
        // account by account, each a range of its pending index read in order: a statement never reads past the
        // rows of other accounts; one that gets fewer than it asked for leaves its account done
        for (Map.Entry<Long, Instant> account : settled.entrySet()) {
            if (processed + putBack >= limit) {
                break;
            }
            Marked chunk = markSettled(account.getKey(), account.getValue(), limit - processed - putBack, usable);
            processed += chunk.processed();
            putBack += chunk.putBack();
        }
        return new Marked(processed, putBack);
    }

    private Marked markSettled(long accountId, Instant through, int limit, Predicate<InboxRow> usable)
            throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return Jdbc.inTransaction(c, tx -> {
                List<InboxKey> processed = new ArrayList<>();
                List<InboxKey> putBack = new ArrayList<>();
                try (PreparedStatement ps = tx.prepareStatement("""
                        select w.delivery_key, w.event, w.account_id, w.body, w.body_raw, w.signed_at
                          from webhook_inbox w
                         where w.account_id = ? and w.next_attempt_at <= ? and""" + PENDING_DAYS + """

                           and w.processed_at is null and w.failed_at is null
                           and (w.claimed_until is null or w.claimed_until < now())
                         order by w.next_attempt_at
                         limit ?
                         for update skip locked""")) {
                    ps.setLong(1, accountId);
                    Jdbc.setInstant(ps, 2, through);
                    ps.setInt(3, limit);
                    for (InboxRow row : readRows(ps)) {
                        (usable.test(row) ? processed : putBack).add(row.inboxKey());
                    }
                }
                update(tx, PROCESSED, processed);
                update(tx, "update webhook_inbox w set next_attempt_at = now()", putBack);
                return new Marked(processed.size(), putBack.size());
            });
        }
    }

    private static void update(Connection tx, String update, List<InboxKey> keys) throws SQLException {
        if (keys.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = tx.prepareStatement(update + " from " + InboxKey.ROWS
                + " where w.delivery_key = k.delivery_key and w.signed_at = k.signed_at")) {
            InboxKey.bind(tx, ps, 1, keys);
            ps.executeUpdate();
        }
    }

    /**
     * What {@link #backOff} did: the account's retry time, the claimed rows it gave back, and how many reconciles of
     * the account have failed in a row (its streak, which a committed reconcile ends).
     */
    public record Backoff(Instant retryAt, int claimedRows, int failures) {
    }

    /**
     * The account's reconcile failed: the account backs off until {@code delay} from now (or later, if it already
     * waits longer: a Retry-After is never cut short), in its one row of {@code inbox_account_backoff} with its
     * failure streak and {@code error}. The claimed {@code keys} are given back with {@code error}, put back now
     * (behind the account's rows stored before); no other row of the account is written: its pending rows, and those
     * that arrive before the retry time, wait because the claim leaves the account out until then, and its retry then
     * claims one row (the probe) until a reconcile commits. So a failed retry writes the account's row and one inbox
     * row, whatever the account's backlog. {@code countAttempt=false} gives the claimed rows' attempt back and leaves
     * the streak as it is (our own misconfiguration, such as a rejected API key, must not use up a delivery's
     * attempts).
     * Only when {@code owner} still holds one of {@code workKeys} (the claimed rows of the failed work, {@code keys}
     * and any it failed meanwhile): a boot whose work was taken over leaves the account to the one that took it.
     * Then {@link Backoff#retryAt()} is null and nothing is written.
     */
    public Backoff backOff(Claimant owner, long accountId, Collection<InboxKey> workKeys, Collection<InboxKey> keys,
                           String error, Duration delay, boolean countAttempt) throws SQLException {
        return backOff(owner, accountId, workKeys, keys, error, delay, false, countAttempt);
    }

    /**
     * As {@link #backOff(Claimant, long, Collection, Collection, String, Duration, boolean)}; {@code asked}: the delay
     * is MetaKit's (Retry-After), which an API answering again for another account never cuts short.
     */
    public Backoff backOff(Claimant owner, long accountId, Collection<InboxKey> workKeys, Collection<InboxKey> keys,
                           String error, Duration delay, boolean asked, boolean countAttempt) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                with b as (
                    insert into inbox_account_backoff as b (account_id, retry_at, failures, last_error, asked)
                    select ?, now() + ?::interval, ?, ?, ?
                     where exists (select 1 from webhook_inbox w, """ + InboxKey.ROWS + """

                                    where w.delivery_key = k.delivery_key and w.signed_at = k.signed_at
                                      and w.claim_token = ?)
                    on conflict (account_id) do update set retry_at = greatest(b.retry_at, excluded.retry_at),
                           failures = b.failures + excluded.failures, last_error = excluded.last_error,
                           asked = case when excluded.retry_at >= b.retry_at then excluded.asked else b.asked end
                    returning retry_at, failures),
                claimed as (
                    -- put back behind the account's rows stored before this failure: the next retry's probe is one
                    -- of those, so a long outage spreads its tries over the backlog instead of spending one row's
                    -- attempts
                    update webhook_inbox w set claimed_by = null, claim_token = null, claimed_until = null,
                           next_attempt_at = now(),
                           last_error = ?, attempts = greatest(w.attempts - ?, 0)""" + HELD + """

                       and w.processed_at is null and exists (select 1 from b)
                    returning 1)
                select (select retry_at from b), (select count(*) from claimed), (select failures from b)""")) {
            String lastError = truncate(error);
            ps.setLong(1, accountId);
            ps.setString(2, Jdbc.interval(delay));
            ps.setInt(3, countAttempt ? 1 : 0);
            ps.setString(4, lastError);
            ps.setBoolean(5, asked);
            int next = InboxKey.bind(c, ps, 6, workKeys);
            ps.setObject(next, owner.bootToken());
            ps.setString(next + 1, lastError);
            ps.setInt(next + 2, countAttempt ? 0 : 1);
            next = InboxKey.bind(c, ps, next + 3, keys);
            ps.setObject(next, owner.bootToken());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                Timestamp retryAt = rs.getTimestamp(1);
                return new Backoff(retryAt == null ? null : retryAt.toInstant(), rs.getInt(2), rs.getInt(3));
            }
        }
    }

    /** Failed with {@code error} (attempts spent, or a row no retry can fix): the rows {@code owner} still holds. */
    public int markFailed(Claimant owner, Collection<InboxKey> keys, String error) throws SQLException {
        return updateHeld("""
                update webhook_inbox w set failed_at = now(), claimed_by = null, claim_token = null,
                       claimed_until = null, last_error = ?""", owner, keys, truncate(error));
    }

    /**
     * Runs {@code update} (an {@code update webhook_inbox w set ...} with {@code parameters} as its placeholders) on
     * the rows of {@code keys} that {@code owner} still holds and has not settled processed. Returns how many.
     */
    private int updateHeld(String update, Claimant owner, Collection<InboxKey> keys, String... parameters)
            throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                update + HELD + " and w.processed_at is null")) {
            for (int i = 0; i < parameters.length; i++) {
                ps.setString(i + 1, parameters[i]);
            }
            int next = InboxKey.bind(c, ps, parameters.length + 1, keys);
            ps.setObject(next, owner.bootToken());
            return ps.executeUpdate();
        }
    }

    private static String truncate(String error) {
        if (error == null) {
            return null;
        }
        return error.length() <= MAX_ERROR_LENGTH ? error : error.substring(0, MAX_ERROR_LENGTH);
    }
}
