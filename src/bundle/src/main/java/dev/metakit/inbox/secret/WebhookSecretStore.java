package dev.metakit.inbox.secret;

import dev.metakit.inbox.db.Jdbc;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Every statement on {@code webhook_secrets} and {@code webhook_secret_rotations} (V10): the stored (encrypted)
 * secrets every instance reads, and the claim that lets one rotation run at a time across instances. Holds no key and
 * sees no secret in clear.
 */
public class WebhookSecretStore {
    private final DataSource dataSource;

    public WebhookSecretStore(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** One row of {@code webhook_secrets}, still encrypted. */
    public record Sealed(String webhookId, long generation, String keyId, byte[] current, byte[] previous,
                         Instant previousUntil, Instant storedAt) {
    }

    /** The last rotation's claim or outcome. */
    public record Rotation(String state, String trigger, String claimedBy, Instant claimedAt, Instant finishedAt,
                           String lastError) {
        public boolean inProgress() {
            return "calling".equals(state);
        }
    }

    /** The newest stored generation of any webhook (the one the instances use), or empty. */
    public Optional<Sealed> read() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("""
                     select webhook_id, generation, key_id, current_secret, previous_secret, previous_until, stored_at
                       from webhook_secrets order by stored_at desc limit 1""")) {
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new Sealed(rs.getString("webhook_id"), rs.getLong("generation"),
                        rs.getString("key_id"), rs.getBytes("current_secret"), rs.getBytes("previous_secret"),
                        Jdbc.getInstant(rs, "previous_until"), Jdbc.getInstant(rs, "stored_at")));
            }
        }
    }

    /** The generation the instances should hold (0: none stored): what the poll compares, cheaply. */
    public long generation() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(
                     "select coalesce(max(generation), 0) from webhook_secrets")) {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    public Optional<Rotation> lastRotation(String webhookId) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return rotation(c, webhookId, false);
        }
    }

    /** The last rotation of any webhook, for the ops page and the stale-claim report. */
    public Optional<Rotation> lastRotation() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("""
                     select state, trigger, claimed_by, claimed_at, finished_at, last_error
                       from webhook_secret_rotations order by claimed_at desc limit 1""");
             ResultSet rs = ps.executeQuery()) {
            return rs.next() ? Optional.of(rotation(rs)) : Optional.empty();
        }
    }

    /**
     * Takes the rotation claim of {@code webhookId} for {@code instance}, in one transaction with the row locked, so
     * that of two instances asked at once one gets it and the other is told who has it.
     *
     * @param dueAfter for a scheduled rotation: claim only if the last stored rotation is at least this old (null: a
     *                 rotation an operator asked for, always due)
     * @param staleAfter a claim older than this is one whose instance stopped: it may be taken over
     * @return the claim, {@link Claim#busy} naming the holder, or {@link Claim#notDue}
     */
    public Claim claim(String webhookId, String trigger, String instance, Duration dueAfter, Duration staleAfter)
            throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                try (PreparedStatement ps = c.prepareStatement("""
                        insert into webhook_secret_rotations (webhook_id, state, trigger, claimed_by, claimed_at)
                        values (?, 'idle', 'none', '', now())
                        on conflict on constraint webhook_secret_rotations_pk do nothing""")) {
                    ps.setString(1, webhookId);
                    ps.executeUpdate();
                }
                Rotation held = rotation(c, webhookId, true).orElseThrow();
                boolean stale;
                try (PreparedStatement ps = c.prepareStatement("select ?::timestamptz < now() - ?::interval")) {
                    Jdbc.setInstant(ps, 1, held.claimedAt());
                    ps.setString(2, Jdbc.interval(staleAfter));
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        stale = rs.getBoolean(1);
                    }
                }
                if (held.inProgress() && !stale) {
                    c.rollback();
                    return Claim.busy(held);
                }
                if (dueAfter != null && !due(c, webhookId, dueAfter)) {
                    c.rollback();
                    return Claim.notDue();
                }
                try (PreparedStatement ps = c.prepareStatement("""
                        update webhook_secret_rotations
                           set state = 'calling', trigger = ?, claimed_by = ?, claimed_at = now(), finished_at = null,
                               last_error = null
                         where webhook_id = ?""")) {
                    ps.setString(1, trigger);
                    ps.setString(2, instance);
                    ps.setString(3, webhookId);
                    ps.executeUpdate();
                }
                c.commit();
                return Claim.taken(held.inProgress() ? held : null);
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    /** Whether the last stored secret of {@code webhookId} is older than {@code every} (read after the lock). */
    private static boolean due(Connection c, String webhookId, Duration every) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                select stored_at < now() - ?::interval from webhook_secrets where webhook_id = ?""")) {
            ps.setString(1, Jdbc.interval(every));
            ps.setString(2, webhookId);
            try (ResultSet rs = ps.executeQuery()) {
                return !rs.next() || rs.getBoolean(1);
            }
        }
    }

    /**
     * Stores a rotation's outcome and ends its claim, in one transaction: the next generation, sealed by the caller.
     * Without a claim ({@code instance} null) it seeds the first generation (a secret moved from the environment).
     */
    public long save(String webhookId, String keyId, SealedPair sealed, String instance) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                try (PreparedStatement ps = c.prepareStatement("""
                        insert into webhook_secrets (webhook_id, generation, key_id, current_secret, previous_secret,
                                                     previous_until, stored_at)
                        values (?, ?, ?, ?, ?, ?, now())
                        on conflict on constraint webhook_secrets_pk do update
                           set generation = excluded.generation, key_id = excluded.key_id,
                               current_secret = excluded.current_secret, previous_secret = excluded.previous_secret,
                               previous_until = excluded.previous_until, stored_at = now()
                         where webhook_secrets.generation < excluded.generation""")) {
                    ps.setString(1, webhookId);
                    ps.setLong(2, sealed.generation());
                    ps.setString(3, keyId);
                    ps.setBytes(4, sealed.current());
                    ps.setBytes(5, sealed.previous());
                    Jdbc.setInstant(ps, 6, sealed.previousUntil());
                    ps.executeUpdate();
                }
                if (instance != null) {
                    finish(c, webhookId, instance, "done", null);
                }
                c.commit();
                return sealed.generation();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    /** What {@link #save} writes: the generation and its ciphertexts. */
    public record SealedPair(long generation, byte[] current, byte[] previous, Instant previousUntil) {
    }

    /** Ends a claim that stored nothing; {@code error} must hold no secret. */
    public void fail(String webhookId, String instance, String error) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            finish(c, webhookId, instance, "failed", error);
        }
    }

    /** Ends this instance's claim (one taken over since by another instance is that one's to end). */
    private static void finish(Connection c, String webhookId, String instance, String state, String error)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                update webhook_secret_rotations set state = ?, finished_at = now(), last_error = ?
                 where webhook_id = ? and claimed_by = ?""")) {
            ps.setString(1, state);
            ps.setString(2, error);
            ps.setString(3, webhookId);
            ps.setString(4, instance);
            ps.executeUpdate();
        }
    }

    /** Deletes the stored secrets (moving back to a secret from the environment). Returns how many rows. */
    public int forget() throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("delete from webhook_secrets")) {
            return ps.executeUpdate();
        }
    }

    private static Optional<Rotation> rotation(Connection c, String webhookId, boolean lock) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                select state, trigger, claimed_by, claimed_at, finished_at, last_error
                  from webhook_secret_rotations where webhook_id = ?""" + (lock ? " for update" : ""))) {
            ps.setString(1, webhookId);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(rotation(rs)) : Optional.empty();
            }
        }
    }

    private static Rotation rotation(ResultSet rs) throws SQLException {
        return new Rotation(rs.getString("state"), rs.getString("trigger"), rs.getString("claimed_by"),
                Jdbc.getInstant(rs, "claimed_at"), Jdbc.getInstant(rs, "finished_at"), rs.getString("last_error"));
    }

    /** The outcome of {@link #claim}. */
    public record Claim(boolean taken, Rotation holder, boolean due) {
        static Claim taken(Rotation overtaken) {
            return new Claim(true, overtaken, true);
        }

        static Claim busy(Rotation holder) {
            return new Claim(false, holder, true);
        }

        static Claim notDue() {
            return new Claim(false, null, false);
        }
    }
}
