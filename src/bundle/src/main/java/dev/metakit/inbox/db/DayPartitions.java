package dev.metakit.inbox.db;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A table partitioned by UTC day (V12): one partition per day, {@code <table>_pYYYYMMDD}, and {@code <table>_kept}
 * for every time before the first day. The bundle makes the days ahead ({@link #makeAhead}); retention
 * ({@link #retire}) drops a day whose time is up: no DELETE on the table, no dead rows left behind.
 *
 * <p>What a day still holds when its time is up is never dropped, and never copied in bulk under the table's lock,
 * where ingest would wait for it: a day whose rows are still to be worked (pending deliveries, unpublished changes:
 * a backlog, after an outage as large as the outage was long) waits, and the days after it, until the worker has
 * worked them, which it does wherever they are; a later run drops it. Only rows no worker will touch again, the dead
 * letters (failed deliveries, waiting for an operator), move, into {@code <table>_leftover}, a partition that covers
 * the dropped days from the first that left any, and holds nothing else. The locked transaction is then: detach the
 * day, copy its dead letters, give the leftover partition the day's range, whatever the day's size; the detached day
 * is dropped after it, holding no lock of the table while its files go.
 * The range is proved by a check validated before that transaction, under a lock that lets inserts and updates go
 * on, which reads the leftover partition only (a few dead letters), not {@code <table>_kept} (after an upgrade in
 * place, the whole earlier table), whose range no longer grows.
 *
 * <p>Each change is one transaction under a transaction-scoped advisory lock per table, so instances running it
 * together do it once. Names are unqualified: the connection's search_path is the bundle's schema.
 */
public final class DayPartitions {
    /** Days made ahead of today: a week of maintenance runs may fail before an insert finds no partition. */
    public static final int DAYS_AHEAD = 7;
    public static final DayPartitions INBOX = new DayPartitions("webhook_inbox", "signed_at");
    public static final DayPartitions FEED = new DayPartitions("position_changes", "reconciled_at");

    /** "metakit-inbox partitions": the advisory lock's first key; the second is the table's */
    private static final int LOCK = 0x6d6b7074;
    /** how long retention waits for the table's lock before it tries at its next run: ingest waits behind it */
    private static final String LOCK_TIMEOUT = "500ms";
    /** the comment a day retirement detached carries until its drop: what marks a detached day as one to drop */
    static final String RETIRED = "metakit: a day retention detached, to be dropped";
    /** PostgreSQL's lock_not_available (lock_timeout) */
    private static final String LOCK_NOT_AVAILABLE = "55P03";
    private static final DateTimeFormatter DAY = DateTimeFormatter.ofPattern("yyyyMMdd");

    private static final String BOUNDS = """
            select c.relname,
                   (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz,
                   (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz
              from pg_inherits i join pg_class c on c.oid = i.inhrelid
             where i.inhparent = to_regclass(?)
             order by 3""";

    private final String table;
    private final String column;
    /** a day partition's name, as a regular expression */
    private final String dayName;

    private DayPartitions(String table, String column) {
        this.table = table;
        this.column = column;
        this.dayName = Pattern.quote(table) + "_p\\d{8}";
    }

    public String table() {
        return table;
    }

    /** the partition of every time before the first day */
    public String kept() {
        return table + "_kept";
    }

    /** One partition: its name and range; {@code from} null for the kept partition (MINVALUE). */
    public record Partition(String name, Instant from, Instant to) {
        boolean covers(Instant t) {
            return (from == null || !t.isBefore(from)) && t.isBefore(to);
        }
    }

    /**
     * What one {@link #retire} did: the days dropped, how many of their rows moved into the leftover partition, the
     * day left waiting for its rows to be worked (null: none), whether a day was left because its table was busy, and
     * how long the transactions that held the table's lock took, together.
     */
    public record Retired(List<String> dropped, long rowsMoved, String waiting, boolean lockBusy, long lockedMillis) {
    }

    /**
     * What a day holds when its time is up, as SQL conditions on the table's columns (constants of the caller's):
     * {@code toWork}, rows still to be worked, which keep the day until they are (null: none); {@code moved}, rows no
     * worker touches again that must outlive the day, which move into the leftover partition (null: none).
     */
    public record Unfinished(String toWork, String moved) {
    }

    /** The table's partitions, ordered by their upper bound. */
    public List<Partition> partitions(Connection c) throws SQLException {
        List<Partition> out = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement(BOUNDS)) {
            s.setString(1, table);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    out.add(new Partition(r.getString(1), instant(r, 2), instant(r, 3)));
                }
            }
        }
        return out;
    }

    /**
     * The first partition, in time order, that begins before {@code before} and holds a row matching
     * {@code condition} (a probe of each partition in turn, through its partial index when it has one).
     */
    public Optional<Partition> firstHolding(Connection c, String condition, Instant before) throws SQLException {
        for (Partition p : partitions(c)) {
            if (p.from() != null && !p.from().isBefore(before)) {
                return Optional.empty();
            }
            if (holds(c, p.name(), condition)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /**
     * The first UTC day from {@code day} to {@code lastDay} that no partition covers, if any (readiness: an insert
     * of that time would fail).
     */
    public Optional<LocalDate> firstUncovered(Connection c, LocalDate day, LocalDate lastDay) throws SQLException {
        List<Partition> all = partitions(c);
        for (LocalDate d = day; !d.isAfter(lastDay); d = d.plusDays(1)) {
            Instant start = start(d);
            if (all.stream().noneMatch(p -> p.covers(start))) {
                return Optional.of(d);
            }
        }
        return Optional.empty();
    }

    /**
     * Makes the day partitions up to {@value #DAYS_AHEAD} days after {@code now}'s day, each from the last one's end
     * (or the kept partition's), so the days stay contiguous however long no instance ran. Returns the names made.
     */
    public List<String> makeAhead(DataSource dataSource, Instant now) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return makeAhead(c, now, null);
        }
    }

    /**
     * {@link #makeAhead(DataSource, Instant)} on {@code c}, in a transaction of its own, in {@code schema} (null: the
     * connection's search_path).
     */
    public List<String> makeAhead(Connection c, Instant now, InboxSchema schema) throws SQLException {
        LocalDate last = day(now).plusDays(DAYS_AHEAD);
        return Jdbc.inTransaction(c, tx -> {
            if (schema != null) {
                try (PreparedStatement s = tx.prepareStatement("select set_config('search_path', ?, true)")) {
                    s.setString(1, schema.quoted());
                    s.execute();
                }
            }
            lock(tx);
            List<Partition> all = partitions(tx);
            if (all.isEmpty()) {
                throw new SQLException(table + " has no partitions: the bundle's migrations made them (V12)");
            }
            LocalDate next = day(all.get(all.size() - 1).to());
            List<String> made = new ArrayList<>();
            try (Statement s = tx.createStatement()) {
                for (LocalDate d = next; !d.isAfter(last); d = d.plusDays(1)) {
                    String name = name(d);
                    s.execute("create table " + name + " partition of " + table + " for values from ('" + start(d)
                            + "') to ('" + start(d.plusDays(1)) + "')");
                    made.add(name);
                }
            }
            return made;
        });
    }

    /** the partition of the dead letters of the days dropped, from the first day that left any */
    public String leftover() {
        return table + "_leftover";
    }

    /**
     * Retires every day partition that ends at or before {@code cutoff}, oldest first, each in one short transaction:
     * the day is dropped, its rows matching {@code unfinished.moved()} moved first into the leftover partition. A day
     * holding rows matching {@code unfinished.toWork()} is not retired, nor are the days after it (the kept days stay
     * contiguous): a later run retires it once they are worked. A day whose lock is not granted within
     * {@value #LOCK_TIMEOUT} is left for the next run.
     */
    public Retired retire(DataSource dataSource, Instant cutoff, Unfinished unfinished) throws SQLException {
        List<String> dropped = new ArrayList<>();
        long moved = 0;
        long lockedNanos = 0;
        try (Connection c = dataSource.getConnection()) {
            dropDetached(c);
            while (true) {
                Partition day = oldestDay(c).filter(p -> !p.to().isAfter(cutoff)).orElse(null);
                if (day == null) {
                    return new Retired(dropped, moved, null, false, lockedNanos / 1_000_000);
                }
                if (holds(c, day.name(), unfinished.toWork())) {
                    return new Retired(dropped, moved, day.name(), false, lockedNanos / 1_000_000);
                }
                Long n;
                try {
                    Partition leftover = holds(c, day.name(), unfinished.moved()) ? prepareLeftover(c, day) : null;
                    long started = System.nanoTime();
                    try {
                        n = Jdbc.inTransaction(c, tx -> retireOne(tx, day, leftover, unfinished));
                    } finally {
                        lockedNanos += System.nanoTime() - started;
                    }
                } catch (SQLException e) {
                    if (LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                        return new Retired(dropped, moved, null, true, lockedNanos / 1_000_000);
                    }
                    throw e;
                }
                if (n == null) {
                    // another instance retired it meanwhile, or it holds rows to work again (a replay, a requeue):
                    // the loop looks again
                    continue;
                }
                dropDetached(c);
                dropped.add(day.name());
                moved += n;
            }
        }
    }

    private Optional<Partition> oldestDay(Connection c) throws SQLException {
        return partitions(c).stream().filter(p -> p.name().matches(dayName)).findFirst();
    }

    /** Whether the partition holds a row matching {@code condition} (null: none): one probe of a partial index. */
    private static boolean holds(Connection c, String partition, String condition) throws SQLException {
        if (condition == null) {
            return false;
        }
        try (Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select exists (select 1 from " + partition + " where " + condition + ")")) {
            r.next();
            return r.getBoolean(1);
        }
    }

    /**
     * Makes ready, before the locked transaction, the leftover partition's range to the end of {@code day}: the table
     * made (with a check of the day's range, which an empty table proves at once) if there is none yet; else a check
     * of its new range added unvalidated (no scan) and validated under a lock that lets inserts and updates go on.
     * Returns the leftover partition as it is now: its range, or, not made yet, null bounds.
     */
    private Partition prepareLeftover(Connection c, Partition day) throws SQLException {
        Partition leftover = partitions(c).stream().filter(p -> p.name().equals(leftover())).findFirst()
                .orElse(null);
        if (leftover == null && !Jdbc.relationExists(c, leftover())) {
            Jdbc.inTransaction(c, tx -> {
                try (Statement s = tx.createStatement()) {
                    lock(tx);
                    if (!Jdbc.relationExists(tx, leftover())) {
                        s.execute("create table " + leftover() + " (like " + table
                                + " including defaults including constraints)");
                        s.execute("alter table " + leftover() + " add constraint " + checkName() + "_next check ("
                                + range(day.from(), day.to()) + ")");
                    }
                }
                return null;
            });
            return new Partition(leftover(), null, null);
        }
        if (leftover == null) {
            return new Partition(leftover(), null, null); // made by a run that did not get to attach it
        }
        String next = checkName() + "_next";
        Jdbc.inTransaction(c, tx -> {
            try (Statement s = tx.createStatement()) {
                s.execute("set local lock_timeout = '" + LOCK_TIMEOUT + "'");
                lock(tx);
                s.execute("alter table " + leftover() + " drop constraint if exists " + next);
                s.execute("alter table " + leftover() + " add constraint " + next + " check ("
                        + range(leftover.from(), day.to()) + ") not valid");
            }
            return null;
        });
        try (Statement s = c.createStatement()) {
            s.execute("alter table " + leftover() + " validate constraint " + next);
        }
        return leftover;
    }

    /**
     * The locked part: the day detached; its rows to move, if any, copied into the leftover partition, which then
     * covers the day. Returns the rows moved, or null when it did nothing: another instance retired the day
     * meanwhile, or it holds rows to work again. The detached day is dropped after ({@link #dropDetached}): a drop
     * removes the day's files as it commits, which takes time with the day's size, and a detached table's drop holds
     * no lock of the table.
     */
    private Long retireOne(Connection tx, Partition day, Partition leftover, Unfinished unfinished)
            throws SQLException {
        try (Statement s = tx.createStatement()) {
            s.execute("set local lock_timeout = '" + LOCK_TIMEOUT + "'");
            lock(tx);
            // read again under the lock: another instance may have retired it meanwhile
            Partition first = oldestDay(tx).orElse(null);
            if (first == null || !first.name().equals(day.name())) {
                return null;
            }
            // the table's lock first (the detach and the drop take it anyway): no replay or requeue can make a row
            // of the day one to work between the look and the drop
            s.execute("lock table only " + table + ", " + day.name() + " in access exclusive mode");
            if (holds(tx, day.name(), unfinished.toWork())) {
                return null;
            }
            if (leftover == null) {
                if (holds(tx, day.name(), unfinished.moved())) {
                    return null; // a row to move since the look before the lock: the next turn moves it
                }
                detachToDrop(s, day);
                return 0L;
            }
            detachToDrop(s, day);
            boolean attached = leftover.to() != null;
            if (attached) {
                s.execute("alter table " + table + " detach partition " + leftover());
            }
            s.execute("alter table " + leftover() + " drop constraint if exists " + checkName());
            s.execute("alter table " + leftover() + " rename constraint " + checkName() + "_next to " + checkName());
            String columns = String.join(", ", columns(tx));
            long moved = s.executeUpdate("insert into " + leftover() + " (" + columns + ") select " + columns
                    + " from " + day.name() + " where " + unfinished.moved());
            Instant from = attached ? leftover.from() : day.from();
            s.execute("alter table " + table + " attach partition " + leftover() + " for values from ('" + from
                    + "') to ('" + day.to() + "')");
            return moved;
        }
    }

    /**
     * Detaches the day and marks it as retirement's to drop, in the same transaction: only a day so marked is ever
     * dropped, so a day an operator detached (to archive it, say) is theirs and stays.
     */
    private void detachToDrop(Statement s, Partition day) throws SQLException {
        s.execute("alter table " + table + " detach partition " + day.name());
        s.execute("comment on table " + day.name() + " is '" + RETIRED + "'");
    }

    /**
     * Drops the days retirement detached: the one it just did, and any whose drop a stop cut short; never a table
     * without retirement's mark. Each drop locks its own table only.
     */
    private void dropDetached(Connection c) throws SQLException {
        List<String> detached = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement("select c.relname from pg_class c"
                + " where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r'"
                + " and not c.relispartition and c.relname ~ ? and obj_description(c.oid, 'pg_class') = ?")) {
            s.setString(1, "^" + table + "_p[0-9]{8}$"); // a name of the bundle's: no character a pattern reads
            s.setString(2, RETIRED);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    detached.add(r.getString(1));
                }
            }
        }
        for (String name : detached) {
            try (Statement s = c.createStatement()) {
                s.execute("drop table if exists " + name);
            }
        }
    }

    private String range(Instant from, Instant to) {
        return column + " >= '" + from + "' and " + column + " < '" + to + "'";
    }

    /** the leftover partition's check that proves its range */
    private String checkName() {
        return leftover() + "_range_ck";
    }

    private List<String> columns(Connection c) throws SQLException {
        List<String> names = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement("select quote_ident(attname) from pg_attribute"
                + " where attrelid = to_regclass(?) and attnum > 0 and not attisdropped order by attnum")) {
            s.setString(1, table);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    names.add(r.getString(1));
                }
            }
        }
        return names;
    }

    private void lock(Connection tx) throws SQLException {
        try (PreparedStatement s = tx.prepareStatement("select pg_advisory_xact_lock(?, hashtext(?))")) {
            s.setInt(1, LOCK);
            s.setString(2, table);
            s.execute();
        }
    }

    /** {@code <table>_pYYYYMMDD} */
    public String name(LocalDate day) {
        return table + "_p" + DAY.format(day);
    }

    public static LocalDate day(Instant t) {
        return LocalDate.ofInstant(t, ZoneOffset.UTC);
    }

    static Instant start(LocalDate day) {
        return day.atStartOfDay(ZoneOffset.UTC).toInstant();
    }

    private static Instant instant(ResultSet r, int column) throws SQLException {
        java.time.OffsetDateTime t = r.getObject(column, java.time.OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }
}
