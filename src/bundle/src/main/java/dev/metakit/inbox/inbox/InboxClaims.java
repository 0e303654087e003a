package dev.metakit.inbox.inbox;

import dev.metakit.inbox.db.Jdbc;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;

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
     * A claim takes whole accounts. The seed is the next {@code limit} due rows in next_attempt_at order;
     * the claim is every due row of the seed's accounts, at most {@code maxRows} of them, whole accounts first in the
     * order the accounts came due, plus the seed's rows without an account. One account's due rows are then one
     * reconcile, not one per batch they would otherwise be spread over. Both parts lock with SKIP LOCKED and take only
     * rows that are due and not leased: a row claimed elsewhere, or waiting for its retry, stays where it is. Seed rows
     * of accounts past the cap are not claimed (their locks end with the statement): the next claim starts with them.
     * The seed skips accounts backing off ({@link #backOff}) and the accounts the claiming instance is still working.
     */
    /**
     * A row of {@code webhook_inbox w} a claim may take: due, and not leased, or leased by a boot that no longer beats
     * (needs the CTE {@code live} of {@link InstanceLiveness#LIVE_TOKENS}).
     */
    private static final String CLAIMABLE = " " + """
            w.processed_at is null and w.failed_at is null and w.next_attempt_at <= now()
            and (w.claimed_until is null or w.claimed_until < now()
                 or (w.claim_token is not null
                     and not exists (select 1 from live where live.boot_token = w.claim_token)))""";

    private static final String CLAIM = """
            with live as (""" + InstanceLiveness.LIVE_TOKENS + """
            ),
            seed as (
                select w.delivery_key, w.account_id, w.next_attempt_at from webhook_inbox w
                 where """ + CLAIMABLE + """
                   -- an account backing off: its rows, those that arrived since its failure too, wait for it
                   and not exists (select 1 from inbox_account_backoff b
                                     where b.account_id = w.account_id and b.retry_at > now())
                   -- an account this instance is still working: its new rows wait for the claim after that work
                   and (w.account_id is null or w.account_id <> all(?))
                 order by w.next_attempt_at
                 limit ?
                 for update of w skip locked),
            seed_accounts as (
                select account_id, min(next_attempt_at) as first_due from seed
                 where account_id is not null group by account_id
                 order by first_due, account_id),
            same_accounts as (
                -- one index scan per account, in the order the accounts came due; the limit stops the scans (and
                -- their locks) once the cap is reached. LATERAL keeps the planner from joining the whole pending
                -- set against the accounts (what it did without statistics right after a bulk insert)
                select k.delivery_key from seed_accounts a
                 cross join lateral (
                     select w.delivery_key from webhook_inbox w
                      where w.account_id = a.account_id and """ + CLAIMABLE + """
                      order by w.next_attempt_at
                      limit ?
                      for update skip locked) k
                 limit ?),
            c as (select delivery_key from same_accounts
                  union select delivery_key from seed where account_id is null)
            update webhook_inbox i
               set claimed_by = ?, claim_token = ?, claimed_until = now() + ?::interval, attempts = i.attempts + 1
              from c
             where i.delivery_key = c.delivery_key
            returning i.delivery_key, i.event, i.account_id, i.body, i.body_raw, i.attempts,
                      i.replayed_at is not null""";

    private final DataSource dataSource;
    private final Duration deadAfter;

    public InboxClaims(DataSource dataSource) {
        this(dataSource, DEFAULT_DEAD_AFTER);
    }

    /** {@code deadAfter}: how long a boot goes without a heartbeat before its claims are free for others. */
    public InboxClaims(DataSource dataSource, Duration deadAfter) {
        this.dataSource = dataSource;
        this.deadAfter = deadAfter;
    }

    /** Claims the due rows of the accounts of the next {@code limit} due rows, at most 10 × {@code limit} rows. */
    public List<InboxRow> claim(Claimant owner, int limit, Duration lease) throws SQLException {
        return claim(owner, limit, 10 * limit, lease);
    }

    /**
     * Claims the due rows of the accounts of the next {@code limit} due rows (in next_attempt_at order), at most
     * {@code maxRows} of them (plus the seed's rows without an account), each with a lease and one attempt more.
     */
    public List<InboxRow> claim(Claimant owner, int limit, int maxRows, Duration lease) throws SQLException {
        return claim(owner, limit, maxRows, lease, Set.of());
    }

    /** As {@link #claim(Claimant, int, int, Duration)}, leaving out the rows of {@code busyAccounts}. */
    public List<InboxRow> claim(Claimant owner, int limit, int maxRows, Duration lease, Set<Long> busyAccounts)
            throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(CLAIM)) {
            int cap = Math.max(maxRows, limit);
            ps.setString(1, Jdbc.interval(deadAfter));
            ps.setArray(2, c.createArrayOf("bigint", busyAccounts.toArray()));
            ps.setInt(3, limit);
            ps.setInt(4, cap);
            ps.setInt(5, cap);
            ps.setString(6, owner.instanceId());
            ps.setObject(7, owner.bootToken());
            ps.setString(8, Jdbc.interval(lease));
            List<InboxRow> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String text = rs.getString(4);
                    byte[] body = text != null ? text.getBytes(StandardCharsets.UTF_8) : rs.getBytes(5);
                    long account = rs.getLong(3);
                    // wasNull right after the read it is about: a null account_id must not become account 0
                    Long accountId = rs.wasNull() ? null : account;
                    rows.add(new InboxRow(rs.getString(1), rs.getString(2), accountId, body, rs.getInt(6),
                            rs.getBoolean(7)));
                }
            }
            return rows;
        }
    }

    /**
     * Extends the lease of the rows {@code owner} still holds (claimed by this boot, not processed): an instance
     * working on rows longer than the lease keeps them; one stuck stops renewing and its rows are claimed again once
     * the lease runs out. Returns how many leases were extended.
     */
    public int renew(Claimant owner, Collection<String> keys, Duration lease) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                update webhook_inbox set claimed_until = now() + ?::interval
                 where delivery_key = any(?) and claim_token = ? and processed_at is null""")) {
            ps.setString(1, Jdbc.interval(lease));
            ps.setArray(2, c.createArrayOf("text", keys.toArray()));
            ps.setObject(3, owner.bootToken());
            return ps.executeUpdate();
        }
    }

    /**
     * Gives the claims of {@code keys} that {@code owner} still holds back, with their attempt: the rows are due again
     * at once, for anyone (an instance stopping with work it could not finish). Returns how many.
     */
    public int release(Claimant owner, Collection<String> keys) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                update webhook_inbox set claimed_by = null, claim_token = null, claimed_until = null,
                       attempts = greatest(attempts - 1, 0)
                 where delivery_key = any(?) and claim_token = ? and processed_at is null""")) {
            ps.setArray(1, c.createArrayOf("text", keys.toArray()));
            ps.setObject(2, owner.bootToken());
            return ps.executeUpdate();
        }
    }

    /**
     * Gives back, with their attempt, the rows {@code owner} holds other than {@code keep}: those of a claim whose
     * answer never reached it (the connection broke after the commit, as in a failover), which no one works on and
     * which its heartbeat would otherwise keep for the whole lease. Returns how many.
     */
    public int releaseAllBut(Claimant owner, Collection<String> keep) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                update webhook_inbox set claimed_by = null, claim_token = null, claimed_until = null,
                       attempts = greatest(attempts - 1, 0)
                 where claim_token = ? and processed_at is null and failed_at is null
                   and delivery_key <> all(?)""")) {
            ps.setObject(1, owner.bootToken());
            ps.setArray(2, c.createArrayOf("text", keep.toArray()));
            return ps.executeUpdate();
        }
    }

    /**
     * Moves the rows that arrived for accounts backing off, and are due by their own time, to their account's retry
     * time, where the account's earlier rows wait; only for accounts whose retry is more than {@code atLeast} away, at
     * most {@code max} rows. Without it every claim reads past them (the seed leaves backing-off accounts out row by
     * row, ~1 µs each): during an API outage with traffic, a pile of the arrival rate times the backoff, read by every
     * claim. Moving a row costs about as much as ~40 such reads, once. Rows claimed and not yet free stay. Returns how
     * many it moved.
     */
    public int deferWhileBackingOff(Duration atLeast, int max) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                with due as (
                    select k.delivery_key, b.retry_at from inbox_account_backoff b
                     cross join lateral (
                         select w.delivery_key from webhook_inbox w
                          where w.account_id = b.account_id
                            and w.processed_at is null and w.failed_at is null and w.next_attempt_at <= now()
                            and (w.claimed_until is null or w.claimed_until < now())
                          order by w.next_attempt_at
                          limit ?
                          for update skip locked) k
                     where b.retry_at > now() + ?::interval
                     limit ?)
                update webhook_inbox w set next_attempt_at = due.retry_at
                  from due
                 where w.delivery_key = due.delivery_key""")) {
            ps.setInt(1, max);
            ps.setString(2, Jdbc.interval(atLeast));
            ps.setInt(3, max);
            return ps.executeUpdate();
        }
    }

    /** Applied (rows that need no reconcile, or whose reconcile committed): the rows {@code owner} still holds. */
    public int markProcessed(Claimant owner, Collection<String> keys) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                update webhook_inbox set processed_at = now(), claimed_by = null, claim_token = null,
                       claimed_until = null, last_error = null
                 where delivery_key = any(?) and claim_token = ? and processed_at is null""")) {
            ps.setArray(1, c.createArrayOf("text", keys.toArray()));
            ps.setObject(2, owner.bootToken());
            return ps.executeUpdate();
        }
    }

    /**
     * Applied, after a reconcile of {@code accountId} committed; the account's backoff, which ran out before the
     * claim, goes with it (one set since, by another instance's failure, stays). Only the rows {@code owner} still
     * holds; if it holds none, the backoff is not touched either.
     */
    public int markProcessed(Claimant owner, long accountId, Collection<String> keys) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                with done as (
                    update webhook_inbox set processed_at = now(), claimed_by = null, claim_token = null,
                           claimed_until = null, last_error = null
                     where delivery_key = any(?) and claim_token = ? and processed_at is null
                    returning 1),
                over as (delete from inbox_account_backoff where account_id = ? and retry_at <= now()
                            and exists (select 1 from done))
                select count(*) from done""")) {
            ps.setArray(1, c.createArrayOf("text", keys.toArray()));
            ps.setObject(2, owner.bootToken());
            ps.setLong(3, accountId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** What {@link #backOff} did: the account's retry time and the rows it put there. */
    public record Backoff(Instant retryAt, int claimedRows, int waitingRows) {
    }

    /**
     * The account's reconcile failed: the account backs off until {@code delay} from now (or later, if it already
     * waits longer: a Retry-After is never cut short). Every pending row of the account is put on that time: the
     * claimed {@code keys} with their lease given back and {@code error}, and the account's other pending rows, not
     * leased elsewhere, with their attempts and error untouched. Rows of the account that arrive before that time
     * wait for it too (the claim skips the account). {@code countAttempt=false} also gives the claimed rows' attempt
     * back (our own misconfiguration, such as a rejected API key, must not use up a delivery's attempts).
     * Only when {@code owner} still holds one of {@code workKeys} (the claimed rows of the failed work, {@code keys}
     * and any it failed meanwhile): a boot whose work was taken over leaves the account to the one that took it.
     * Then {@link Backoff#retryAt()} is null and nothing is written.
     */
    public Backoff backOff(Claimant owner, long accountId, Collection<String> workKeys, Collection<String> keys,
                           String error, Duration delay, boolean countAttempt) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                with b as (
                    insert into inbox_account_backoff as b (account_id, retry_at)
                    select ?, now() + ?::interval
                     where exists (select 1 from webhook_inbox where delivery_key = any(?) and claim_token = ?)
                    on conflict (account_id) do update set retry_at = greatest(b.retry_at, excluded.retry_at)
                    returning retry_at),
                claimed as (
                    update webhook_inbox w set next_attempt_at = b.retry_at, claimed_by = null, claim_token = null,
                           claimed_until = null, last_error = ?, attempts = greatest(w.attempts - ?, 0)
                      from b
                     where w.delivery_key = any(?) and w.claim_token = ? and w.processed_at is null
                    returning 1),
                waiting as (
                    update webhook_inbox w set next_attempt_at = b.retry_at
                      from b
                     where w.account_id = ? and w.processed_at is null and w.failed_at is null
                       and w.delivery_key <> all(?)
                       and (w.claimed_until is null or w.claimed_until < now())
                    returning 1)
                select (select retry_at from b), (select count(*) from claimed), (select count(*) from waiting)""")) {
            Array claimedKeys = c.createArrayOf("text", keys.toArray());
            ps.setLong(1, accountId);
            ps.setString(2, Jdbc.interval(delay));
            ps.setArray(3, c.createArrayOf("text", workKeys.toArray()));
            ps.setObject(4, owner.bootToken());
            ps.setString(5, truncate(error));
            ps.setInt(6, countAttempt ? 0 : 1);
            ps.setArray(7, claimedKeys);
            ps.setObject(8, owner.bootToken());
            ps.setLong(9, accountId);
            ps.setArray(10, claimedKeys);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                Timestamp retryAt = rs.getTimestamp(1);
                return new Backoff(retryAt == null ? null : retryAt.toInstant(), rs.getInt(2), rs.getInt(3));
            }
        }
    }

    /** Failed with {@code error} (attempts spent, or a row no retry can fix): the rows {@code owner} still holds. */
    public int markFailed(Claimant owner, Collection<String> keys, String error) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                update webhook_inbox set failed_at = now(), claimed_by = null, claim_token = null,
                       claimed_until = null, last_error = ?
                 where delivery_key = any(?) and claim_token = ? and processed_at is null""")) {
            ps.setString(1, truncate(error));
            ps.setArray(2, c.createArrayOf("text", keys.toArray()));
            ps.setObject(3, owner.bootToken());
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
