package dev.metakit.inbox.feed;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.metakit.inbox.db.Jdbc;
import dev.metakit.inbox.db.Rows;

import java.math.BigDecimal;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The SQL of the change feed's tables, {@code position_changes} and its per-account sequence
 * {@code position_change_seqs}; every method works on a connection the caller owns.
 */
public final class ChangeStore {

    private static final String COLUMNS = "change_id, account_id, seq, ticket, kind, status, symbol, type, volume,"
            + " price_open, opened_at, sl, tp, closed_at, close_deal_ticket, close_price, close_profit, changed,"
            + " source, reconciled_at, trace_parent";

    /** The channel a committed change is announced on (payload: its account id, or empty for "look at all"). */
    static final String CHANNEL = "metakit_feed";

    // The upsert takes the account's next seq and holds its row locked until the caller's transaction ends. The same
    // statement announces the account on CHANNEL, delivered by PostgreSQL only if and when the transaction commits
    // (repeats in one transaction fold into one), so a publisher wakes for committed changes only. And the same round
    // trip hands back the change's numbers and times as the table will store them (numeric's scale, timestamptz's
    // microseconds) and the reconcile time, so the payload below is the JSON the in-process publisher would build
    // from the stored row, to the byte.
    private static final String NEXT_SEQ = "with n as (insert into position_change_seqs as s (account_id, last_seq)"
            + " values (?, 1) on conflict on constraint position_change_seqs_pk do update set last_seq = s.last_seq + 1"
            + " returning last_seq)"
            + " select n.last_seq, pg_notify('" + CHANNEL + "', ?), now() as reconciled_at, ?::numeric as volume,"
            + " ?::numeric as price_open, ?::timestamptz as opened_at, ?::numeric as sl, ?::numeric as tp,"
            + " ?::timestamptz as closed_at, ?::numeric as close_price, ?::numeric as close_profit from n";

    private static final String INSERT = "insert into position_changes (account_id, seq, ticket, kind, status,"
            + " symbol, type, volume, price_open, opened_at, sl, tp, closed_at, close_deal_ticket, close_price,"
            + " close_profit, changed, source, reconciled_at, payload, trace_parent)"
            + " values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::json, ?)";

    private static final ObjectMapper JSON = JsonMapper.builder().build();

    private ChangeStore() {
    }

    /**
     * Appends {@code change} to its account's feed with the account's next seq, in {@code c}'s transaction (the
     * reconcile's: the change commits with the positions row it describes); its change id, seq and reconcile time
     * are the table's. {@code profit} goes to {@code close_profit}. The row carries its published JSON in
     * {@code payload}: what Debezium's outbox event router publishes (docs/change-feed.md, "Past one publisher: Debezium").
     */
    public static void append(Connection c, FeedChange change) throws SQLException {
        FeedChange stored = numbered(c, change);
        String payload;
        try {
            payload = JSON.writeValueAsString(stored.toJson());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("feed change " + stored.id() + " has no JSON form", e);
        }
        Array names = c.createArrayOf("text", stored.changed().toArray());
        try (PreparedStatement s = c.prepareStatement(INSERT)) {
            int i = 1;
            s.setLong(i++, stored.accountId());
            s.setLong(i++, stored.seq());
            s.setLong(i++, stored.ticket());
            s.setString(i++, stored.kind());
            s.setString(i++, stored.status());
            s.setString(i++, stored.symbol());
            s.setString(i++, stored.type());
            Jdbc.setDecimal(s, i++, stored.volume());
            Jdbc.setDecimal(s, i++, stored.priceOpen());
            Jdbc.setInstant(s, i++, stored.openedAt());
            Jdbc.setDecimal(s, i++, stored.sl());
            Jdbc.setDecimal(s, i++, stored.tp());
            Jdbc.setInstant(s, i++, stored.closedAt());
            Jdbc.setLong(s, i++, stored.closeDealTicket());
            Jdbc.setDecimal(s, i++, stored.closePrice());
            Jdbc.setDecimal(s, i++, stored.profit());
            s.setArray(i++, names);
            s.setString(i++, stored.source());
            Jdbc.setInstant(s, i++, stored.reconciledAt());
            s.setString(i++, payload);
            s.setString(i, stored.traceParent());
            s.executeUpdate();
        } finally {
            names.free();
        }
    }

    /** {@code change} with its account's next seq, the reconcile time, and its values as the table stores them. */
    private static FeedChange numbered(Connection c, FeedChange change) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(NEXT_SEQ)) {
            int i = 1;
            s.setLong(i++, change.accountId());
            s.setString(i++, Long.toString(change.accountId())); // the NOTIFY's payload: the account to publish
            Jdbc.setDecimal(s, i++, change.volume());
            Jdbc.setDecimal(s, i++, change.priceOpen());
            Jdbc.setInstant(s, i++, change.openedAt());
            Jdbc.setDecimal(s, i++, change.sl());
            Jdbc.setDecimal(s, i++, change.tp());
            Jdbc.setInstant(s, i++, change.closedAt());
            Jdbc.setDecimal(s, i++, change.closePrice());
            Jdbc.setDecimal(s, i, change.profit());
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return new FeedChange(0, change.accountId(), rs.getLong("last_seq"), change.ticket(), change.kind(),
                        change.status(), change.symbol(), change.type(), rs.getBigDecimal("volume"),
                        rs.getBigDecimal("price_open"), Jdbc.getInstant(rs, "opened_at"), rs.getBigDecimal("sl"),
                        rs.getBigDecimal("tp"), Jdbc.getInstant(rs, "closed_at"), change.closeDealTicket(),
                        rs.getBigDecimal("close_price"), rs.getBigDecimal("close_profit"), change.changed(),
                        change.source(), Jdbc.getInstant(rs, "reconciled_at"), change.traceParent());
            }
        }
    }

    /**
     * Up to {@code limit} accounts with an unpublished change, in account order after {@code afterAccount}: a loose
     * index scan of {@code position_changes_unpublished_idx} (one index probe per account, however many changes
     * wait), where grouping all unpublished rows would read every one of them.
     */
    static List<Long> accountsWithUnpublished(Connection c, long afterAccount, int limit) throws SQLException {
        List<Long> out = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement("""
                with recursive due(account_id) as (
                    (select account_id from position_changes
                      where published_at is null and account_id > ? order by account_id limit 1)
                    union all
                    select (select p.account_id from position_changes p
                             where p.published_at is null and p.account_id > due.account_id
                             order by p.account_id limit 1)
                      from due where due.account_id is not null)
                select account_id from due where account_id is not null limit ?""")) {
            s.setLong(1, afterAccount);
            s.setInt(2, limit);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getLong(1));
                }
            }
        }
        return out;
    }

    /**
     * The account's next unpublished changes in seq order, after {@code afterSeq}: a publisher that just marked a
     * batch starts the index scan past it rather than over the entries it just made dead.
     */
    static List<FeedChange> unpublished(Connection c, long accountId, long afterSeq, int limit) throws SQLException {
        return unpublished(c, Map.of(accountId, afterSeq), limit).getOrDefault(accountId, List.of());
    }

    static List<FeedChange> unpublished(Connection c, long accountId, int limit) throws SQLException {
        return unpublished(c, accountId, 0, limit);
    }

    /**
     * Of each account (key) its next {@code limit} unpublished changes in seq order after the seq given (value), in
     * one statement: an index range per account. Accounts without any are left out.
     */
    static Map<Long, List<FeedChange>> unpublished(Connection c, Map<Long, Long> afterSeqByAccount, int limit)
            throws SQLException {
        Map<Long, List<FeedChange>> out = new LinkedHashMap<>();
        if (afterSeqByAccount.isEmpty()) {
            return out;
        }
        Array accounts = c.createArrayOf("bigint", afterSeqByAccount.keySet().toArray());
        Array afterSeqs = c.createArrayOf("bigint", afterSeqByAccount.values().toArray());
        try (PreparedStatement s = c.prepareStatement("select x.* from unnest(?::bigint[], ?::bigint[])"
                + " with ordinality as due(account, after_seq, i) cross join lateral (select " + COLUMNS
                + " from position_changes where account_id = due.account and published_at is null"
                + " and seq > due.after_seq order by seq limit ?) x order by due.i, x.seq")) {
            s.setArray(1, accounts);
            s.setArray(2, afterSeqs);
            s.setInt(3, limit);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    FeedChange change = change(rs);
                    out.computeIfAbsent(change.accountId(), a -> new ArrayList<>()).add(change);
                }
            }
        } finally {
            accounts.free();
            afterSeqs.free();
        }
        return out;
    }

    /**
     * Marks changes of several accounts published, in one statement, fenced per account: a change is marked only
     * while {@code owner} (a boot token) still owns its account's feed at the epoch given for it ({@code feed_owners},
     * {@link FeedOwnership}). FOR SHARE makes a takeover running at the same moment wait for this mark (then the new
     * owner does not send these changes again), or this mark see the new epoch and write nothing of that account.
     * Returns how many rows it marked per account: fewer than asked means some were no longer this publisher's to mark
     * (none once the account was taken over).
     */
    static Map<Long, Integer> markPublished(Connection c, Map<Long, Long> epochByAccount, Collection<FeedChange> changes,
                                            UUID owner) throws SQLException {
        Map<Long, Integer> marked = new HashMap<>();
        if (changes.isEmpty()) {
            return marked;
        }
        Array ids = c.createArrayOf("bigint", changes.stream().map(FeedChange::changeId).toArray());
        // as text with its offset (Instant's ISO form), whatever the JVM's or the session's time zone
        Array reconciledAt = c.createArrayOf("text", changes.stream().map(ch -> ch.reconciledAt().toString()).toArray());
        Array accounts = c.createArrayOf("bigint", epochByAccount.keySet().toArray());
        Array epochs = c.createArrayOf("bigint", epochByAccount.values().toArray());
        // by change_id and reconciled_at, joined one change at a time: each looked up in its own partition (pruned as
        // the statement runs), not by change_id in every partition of the days retained
        try (PreparedStatement s = c.prepareStatement("""
                update position_changes p set published_at = now()
                  from unnest(?::bigint[], ?::text[]::timestamptz[]) as k(change_id, reconciled_at)
                 where p.change_id = k.change_id and p.reconciled_at = k.reconciled_at and p.published_at is null
                   and p.account_id in (select o.account_id
                                          from feed_owners o
                                          join unnest(?::bigint[], ?::bigint[]) as l(account_id, epoch)
                                            on o.account_id = l.account_id and o.epoch = l.epoch
                                         where o.owner_token = ? for share of o)
                returning p.account_id""")) {
            s.setArray(1, ids);
            s.setArray(2, reconciledAt);
            s.setArray(3, accounts);
            s.setArray(4, epochs);
            s.setObject(5, owner);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    marked.merge(rs.getLong(1), 1, Integer::sum);
                }
            }
        } finally {
            ids.free();
            reconciledAt.free();
            accounts.free();
            epochs.free();
        }
        return marked;
    }

    /** Wakes the publishers for one account ({@code null}: for every account with unpublished changes). */
    static void announce(Connection c, Long accountId) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("select pg_notify('" + CHANNEL + "', ?)")) {
            s.setString(1, accountId == null ? "" : accountId.toString());
            s.execute();
        }
    }

    /** Marks the account's changes from {@code fromSeq} on unpublished again. Returns how many. */
    static int replayFrom(Connection c, long accountId, long fromSeq) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("update position_changes set published_at = null"
                + " where account_id = ? and seq >= ? and published_at is not null")) {
            s.setLong(1, accountId);
            s.setLong(2, fromSeq);
            int n = s.executeUpdate();
            announce(c, accountId);
            return n;
        }
    }

    /** Marks every change reconciled at or after {@code since} unpublished again. Returns how many. */
    static int replaySince(Connection c, Instant since) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("update position_changes set published_at = null"
                + " where reconciled_at >= ? and published_at is not null")) {
            Jdbc.setInstant(s, 1, since);
            int n = s.executeUpdate();
            announce(c, null);
            return n;
        }
    }

    /**
     * Deletes changes published before {@code cutoff}, in batches; unpublished ones are kept. The rows are locked
     * before the delete, so a replay that marks one unpublished meanwhile keeps it (the delete re-checks it).
     */
    static long prunePublished(Connection c, Instant cutoff, int batchSize, Jdbc.Progress progress)
            throws SQLException {
        return pruneBefore(c, "published_at", cutoff, batchSize, progress);
    }

    /** Deletes changes reconciled before {@code cutoff}, published or not, in batches. */
    static long pruneReconciled(Connection c, Instant cutoff, int batchSize, Jdbc.Progress progress)
            throws SQLException {
        return pruneBefore(c, "reconciled_at", cutoff, batchSize, progress);
    }

    /**
     * Deletes the kept partition's changes whose {@code column} (a name of this class, never a caller's text) is
     * before cutoff (the days are dropped whole: DayPartitions).
     */
    private static long pruneBefore(Connection c, String column, Instant cutoff, int batchSize, Jdbc.Progress progress)
            throws SQLException {
        try (PreparedStatement s = c.prepareStatement("delete from position_changes_kept where (change_id, reconciled_at) in ("
                + " select change_id, reconciled_at from position_changes_kept where " + column + " < ? limit ? for update skip locked)")) {
            Jdbc.setInstant(s, 1, cutoff);
            s.setInt(2, batchSize);
            return Jdbc.deleteInBatches(s, batchSize, progress);
        }
    }

    /** How long the oldest unpublished change has waited (zero when none waits): the feed's lag. */
    static Duration lag(Connection c) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("select extract(epoch from now() - min(reconciled_at))"
                + " from position_changes where published_at is null"); ResultSet rs = s.executeQuery()) {
            rs.next();
            BigDecimal seconds = rs.getBigDecimal(1);
            return seconds == null || seconds.signum() < 0 ? Duration.ZERO
                    : Duration.ofNanos(seconds.movePointRight(9).longValue());
        }
    }

    /** The feed's lag in whole seconds and how many changes are unpublished, for the ops page. */
    static Map<String, Object> lagSummary(Connection c) throws SQLException {
        return Rows.read(c, """
                select coalesce(extract(epoch from now() - min(reconciled_at)), 0)::bigint as "lagSeconds",
                       count(*)::int as "unpublished"
                  from position_changes where published_at is null""").get(0);
    }

    private static FeedChange change(ResultSet rs) throws SQLException {
        Array changed = rs.getArray("changed");
        List<String> names = Arrays.asList((String[]) changed.getArray());
        changed.free();
        return new FeedChange(rs.getLong("change_id"), rs.getLong("account_id"), rs.getLong("seq"),
                rs.getLong("ticket"), rs.getString("kind"), rs.getString("status"), rs.getString("symbol"),
                rs.getString("type"), rs.getBigDecimal("volume"), rs.getBigDecimal("price_open"),
                Jdbc.getInstant(rs, "opened_at"), rs.getBigDecimal("sl"), rs.getBigDecimal("tp"), Jdbc.getInstant(rs, "closed_at"),
                (Long) rs.getObject("close_deal_ticket"), rs.getBigDecimal("close_price"),
                rs.getBigDecimal("close_profit"), List.copyOf(names), rs.getString("source"),
                Jdbc.getInstant(rs, "reconciled_at"), rs.getString("trace_parent"));
    }
}
