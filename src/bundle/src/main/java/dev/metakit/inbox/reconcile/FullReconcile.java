package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.config.Required;
import org.apache.camel.Exchange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A reconcile of every known account ({@code METAKIT_ACCOUNTS} plus every account a delivery named), the bean
 * {@code fullReconcile} that the route {@code metakit-reconcile-all} (the worker's {@code InboxToPositionRoutes})
 * calls: {@link #begin} lists the accounts and opens a {@code reconcile_runs} row, the route reconciles them with
 * bounded concurrency, each one reporting back for the progress line, and {@link #finish} records the run's figures.
 * Periodic runs happen once per period across all instances on one database: a run starts only if no other instance
 * started one within the last 90% of the period, by the database's clock. The period is the schedule's that fired
 * (routes/reconcile.camel.yaml: Quartz's {@value #FIRE_TIME} to {@value #NEXT_FIRE_TIME}), so an edited
 * {@code repeatInterval} or cron is the one that runs; {@code metakit.reconcile.interval} where the trigger does not
 * say (a {@code timer:} or a one-off call).
 */
public class FullReconcile {
    private static final Logger LOG = LoggerFactory.getLogger(FullReconcile.class);
    /** who started a full reconcile: {@value #PERIODIC} (the default), status-watch, or any word a caller gives */
    public static final String TRIGGER_HEADER = "MetaKitTrigger";
    public static final String PERIODIC = "periodic";
    static final String RUN = "metakitRun";
    /** the Quartz consumer's headers: when this firing was due and when the next one is */
    static final String FIRE_TIME = "scheduledFireTime";
    static final String NEXT_FIRE_TIME = "nextFireTime";
    /** one advisory lock key for "who starts the periodic run" */
    private static final long PERIODIC_LOCK = 0x4d4b_5245_434fL;

    private DataSource dataSource;
    private AccountReconciler accountReconciler;
    private String configuredAccounts;
    private Long intervalMillis;

    /** Progress of one run, shared by the split's parallel branches. */
    public static final class Run {
        final long id;
        final String trigger;
        final int total;
        final Instant started = Instant.now();
        final AtomicInteger done = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final AtomicInteger changes = new AtomicInteger();

        Run(long id, String trigger, int total) {
            this.id = id;
            this.trigger = trigger;
            this.total = total;
        }
    }

    /**
     * Lists the accounts to reconcile, each as a full scan with the run's trigger (empty when another instance
     * already ran this period).
     */
    public List<AccountReconcile> begin(Exchange exchange) throws SQLException {
        String trigger = exchange.getMessage().getHeader(TRIGGER_HEADER, PERIODIC, String.class);
        List<Long> accounts = accounts();
        Long runId = openRun(trigger, accounts.size(), periodMillis(exchange));
        if (runId == null) {
            LOG.debug("Periodic reconcile skipped: another instance ran it within this period");
            return List.of();
        }
        exchange.setProperty(RUN, new Run(runId, trigger, accounts.size()));
        LOG.info("Full reconcile #{} ({}): {} accounts", runId, trigger, accounts.size());
        return accounts.stream().map(account -> AccountReconcile.fullScan(account, trigger)).toList();
    }

    public void accountDone(Exchange exchange) {
        Run run = exchange.getProperty(RUN, Run.class);
        if (exchange.getMessage().getBody() instanceof ReconcileResult r) {
            run.changes.addAndGet(r.changes());
        }
        progress(run, run.done.incrementAndGet());
    }

    public void accountFailed(Exchange exchange) {
        Run run = exchange.getProperty(RUN, Run.class);
        Exception e = exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Exception.class);
        // the reconcile's answers replaced the body it was given: it keeps the request beside it
        long account = ReconcileSteps.carried(exchange).accountId();
        String error = e == null ? "reconcile failed" : e.getMessage();
        LOG.warn("Full reconcile #{}: account {} failed: {}", run.id, account, error);
        accountReconciler.recordFailure(account, error);
        run.failed.incrementAndGet();
        progress(run, run.done.incrementAndGet());
    }

    private void progress(Run run, int done) {
        int step = Math.max(1, run.total / 10);
        if (done % step == 0 && done < run.total) {
            LOG.info("Full reconcile #{}: {}/{} accounts, {} changes, {} failed", run.id, done, run.total,
                    run.changes.get(), run.failed.get());
        }
    }

    public void finish(Exchange exchange) throws SQLException {
        Run run = exchange.getProperty(RUN, Run.class);
        if (run == null) {
            return;
        }
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                update reconcile_runs set finished_at = now(), accounts_done = ?, accounts_failed = ?, changes = ?
                 where run_id = ?""")) {
            ps.setInt(1, run.done.get() - run.failed.get());
            ps.setInt(2, run.failed.get());
            ps.setInt(3, run.changes.get());
            ps.setLong(4, run.id);
            ps.executeUpdate();
        }
        LOG.info("Full reconcile #{} ({}) done in {} ms: {}/{} accounts, {} changes, {} failed", run.id, run.trigger,
                Duration.between(run.started, Instant.now()).toMillis(), run.done.get() - run.failed.get(), run.total,
                run.changes.get(), run.failed.get());
    }

    List<Long> accounts() {
        TreeSet<Long> all = new TreeSet<>(accountReconciler.knownAccounts());
        Arrays.stream(Required.setting(configuredAccounts, "metakit.accounts").split(","))
                .map(String::trim).filter(s -> !s.isEmpty()).map(Long::valueOf).forEach(all::add);
        return new ArrayList<>(all);
    }

    /** The firing schedule's period (from one firing to the next), or the setting where the trigger gives none. */
    long periodMillis(Exchange exchange) {
        Date due = exchange.getMessage().getHeader(FIRE_TIME, Date.class);
        Date next = exchange.getMessage().getHeader(NEXT_FIRE_TIME, Date.class);
        if (due != null && next != null && next.after(due)) {
            return next.getTime() - due.getTime();
        }
        return Required.setting(intervalMillis, "metakit.reconcile.interval");
    }

    private Long openRun(String trigger, int total, long periodMillis) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                if (PERIODIC.equals(trigger)) {
                    try (PreparedStatement lock = c.prepareStatement("select pg_advisory_xact_lock(?)")) {
                        lock.setLong(1, PERIODIC_LOCK);
                        lock.execute();
                    }
                    // the database's clock on both sides of the comparison (started_at is its now()): the instances'
                    // own clocks may be off from it and from each other by more than a tenth of a period
                    try (PreparedStatement last = c.prepareStatement("select exists (select 1 from reconcile_runs"
                            + " where trigger = ? and started_at > now() - ?::interval)")) {
                        last.setString(1, PERIODIC);
                        last.setString(2, periodMillis * 9 / 10 + " milliseconds");
                        try (ResultSet rs = last.executeQuery()) {
                            rs.next();
                            if (rs.getBoolean(1)) {
                                c.commit();
                                return null;
                            }
                        }
                    }
                }
                long id;
                try (PreparedStatement insert = c.prepareStatement(
                        "insert into reconcile_runs (trigger, accounts_total) values (?, ?) returning run_id")) {
                    insert.setString(1, trigger);
                    insert.setInt(2, total);
                    try (ResultSet rs = insert.executeQuery()) {
                        rs.next();
                        id = rs.getLong(1);
                    }
                }
                c.commit();
                return id;
            } catch (SQLException e) {
                c.rollback();
                throw e;
            }
        }
    }

    /** The initMethod: refuses a setting left unset (the runs come from the reconcile routes). */
    public void checkSettings() {
        Required.setting(configuredAccounts, "metakit.accounts");
        Required.setting(intervalMillis, "metakit.reconcile.interval");
    }

    public void setDataSource(DataSource dataSource) { this.dataSource = dataSource; }
    public void setAccountReconciler(AccountReconciler accountReconciler) { this.accountReconciler = accountReconciler; }
    public void setConfiguredAccounts(String accounts) {
        for (String s : accounts == null ? new String[0] : accounts.split(",")) {
            if (!s.isBlank() && !s.trim().matches("\\d{1,18}")) {
                throw new dev.metakit.inbox.config.ConfigurationException(
                        "METAKIT_ACCOUNTS must be a comma list of account ids, got '" + s.trim() + "'");
            }
        }
        this.configuredAccounts = accounts;
    }
    public void setIntervalMillis(long intervalMillis) { this.intervalMillis = intervalMillis; }
}
