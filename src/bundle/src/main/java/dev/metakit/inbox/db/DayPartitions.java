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

/**
 * A table partitioned by UTC day (V12): one partition per day, {@code <table>_pYYYYMMDD}, and {@code <table>_kept}
 * for every time before the first day. The bundle makes the days ahead ({@link #makeAhead}); retention
 * ({@link #retire}) detaches a day whose time is up, moves its unfinished rows into the kept partition, whose range
 * then reaches to the end of that day, and drops the day: no DELETE on the table, no dead rows left behind.
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

    private DayPartitions(String table, String column) {
        this.table = table;
        this.column = column;
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

    /** What one {@link #retire} did: the days dropped and how many of their rows moved into the kept partition. */
    public record Retired(List<String> dropped, long rowsKept, boolean lockBusy) {
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

    /**
     * Retires every day partition that ends at or before {@code cutoff}, oldest first, each in one transaction: its
     * rows matching {@code unfinished} (an SQL condition on the table's columns, a constant of the caller's; null:
     * none is kept) move into the kept partition, whose range grows to the day's end, and the day is dropped. A day
     * whose lock is not granted within {@value #LOCK_TIMEOUT} is left for the next run.
     */
    public Retired retire(DataSource dataSource, Instant cutoff, String unfinished) throws SQLException {
        List<String> dropped = new ArrayList<>();
        long kept = 0;
        try (Connection c = dataSource.getConnection()) {
            while (true) {
                Partition day = oldestDay(c).filter(p -> !p.to().isAfter(cutoff)).orElse(null);
                if (day == null) {
                    return new Retired(dropped, kept, false);
                }
                Long moved;
                try {
                    proveKeptRange(c, day.to());
                    moved = Jdbc.inTransaction(c, tx -> retireOne(tx, day, unfinished));
                } catch (SQLException e) {
                    if (LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                        return new Retired(dropped, kept, true);
                    }
                    throw e;
                }
                if (moved != null) {
                    dropped.add(day.name());
                    kept += moved;
                }
            }
        }
    }

    private Optional<Partition> oldestDay(Connection c) throws SQLException {
        return partitions(c).stream().filter(p -> p.from() != null).findFirst();
    }

    /**
     * Gives the kept partition the check its next range needs, so that attaching it with that range skips the scan:
     * added unvalidated (no scan), then validated under a lock that lets inserts and updates go on, before the
     * transaction that detaches and attaches, which holds the table.
     */
    private void proveKeptRange(Connection c, Instant to) throws SQLException {
        String next = checkName() + "_next";
        Jdbc.inTransaction(c, tx -> {
            try (Statement s = tx.createStatement()) {
                s.execute("set local lock_timeout = '" + LOCK_TIMEOUT + "'");
                lock(tx);
                s.execute("alter table " + kept() + " drop constraint if exists " + next);
                s.execute("alter table " + kept() + " add constraint " + next + " check (" + column + " < '" + to
                        + "') not valid");
            }
            return null;
        });
        try (Statement s = c.createStatement()) {
            s.execute("alter table " + kept() + " validate constraint " + next);
        }
    }

    /** Returns the rows moved into the kept partition, or null when another instance retired the day meanwhile. */
    private Long retireOne(Connection tx, Partition day, String unfinished) throws SQLException {
        try (Statement s = tx.createStatement()) {
            s.execute("set local lock_timeout = '" + LOCK_TIMEOUT + "'");
            lock(tx);
            // read again under the lock: another instance may have retired it meanwhile
            Partition first = oldestDay(tx).orElse(null);
            if (first == null || !first.name().equals(day.name())) {
                return null;
            }
            String kept = kept();
            s.execute("alter table " + table + " detach partition " + day.name());
            s.execute("alter table " + table + " detach partition " + kept);
            s.execute("alter table " + kept + " drop constraint if exists " + checkName());
            s.execute("alter table " + kept + " rename constraint " + checkName() + "_next to " + checkName());
            long moved = 0;
            if (unfinished != null) {
                String columns = String.join(", ", columns(tx));
                moved = s.executeUpdate("insert into " + kept + " (" + columns + ") select " + columns + " from "
                        + day.name() + " where " + unfinished);
            }
            s.execute("alter table " + table + " attach partition " + kept + " for values from (minvalue) to ('"
                    + day.to() + "')");
            s.execute("drop table " + day.name());
            return moved;
        }
    }

    /** the kept partition's check that proves its range ({@code column < its upper bound}) */
    private String checkName() {
        return kept() + "_range_ck";
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
