package dev.metakit.inbox.feed;

import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.ContextBean;
import dev.metakit.inbox.config.EnumeratedSettings;
import dev.metakit.inbox.config.Required;
import dev.metakit.inbox.inbox.Heartbeat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Publishes the change feed: every change of {@code position_changes} to the outlet route
 * ({@code direct:metakit-change-outlet} in {@code routes/changes.camel.yaml}), at least once, in seq order per account.
 *
 * <p>An account is published when it is offered: by {@link FeedWakeups} when a reconcile commits a change of it
 * (PostgreSQL {@code NOTIFY}), by the retry of its backoff, or by {@link #publishDue()}, the feed's poll route, which
 * is the backstop (and starts the rest at its first call). An offered account gets a turn ({@link AccountTurns}) unless
 * it has one already (then it gets another turn after it) or is backing off; turns are taken in rounds on a pool of
 * {@code concurrency} threads, each round publishing the accounts queued at its start together ({@link FeedRound}:
 * the ownership of each account, its batches in seq order, one fenced mark per batch, and what a failure does).
 */
public class ChangePublisher extends ContextBean {
    private static final Logger LOG = LoggerFactory.getLogger(ChangePublisher.class);
    static final String DEFAULT_OUTLET = "{{metakit.feed.outlet-endpoint}}";
    static final int DEFAULT_BATCH_SIZE = 500;

    private final ObjectWriter json = JsonMapper.builder().build().writer();
    private final FeedCounts counts = new FeedCounts();

    private DataSource dataSource;
    private Heartbeat heartbeat;
    private LongSupplier nanoClock = System::nanoTime;
    private String outlet = DEFAULT_OUTLET;
    private Integer concurrency;
    private Long backoffBaseMillis;
    private Long backoffMaxMillis;
    private int maxAccountsPerPoll = 1000;
    private int batchSize = DEFAULT_BATCH_SIZE;
    private volatile boolean stopped;
    private volatile boolean pollFailing;
    private final DueAccounts dueAccounts = new DueAccounts();
    // metakit.feed.publisher: false when something else (Debezium) publishes position_changes
    private boolean inProcess = true;

    /** what runs once the feed publishes: made by the first publishDue, given back by end() */
    private volatile FeedParts parts;
    private volatile AccountTurns turns;

    @Override
    protected void checkSettings() {
        Required.setting(concurrency, "metakit.feed.concurrency");
        Required.setting(backoffBaseMillis, "metakit.feed.backoff-base-millis");
        Required.setting(backoffMaxMillis, "metakit.feed.backoff-max-millis");
        if (heartbeat == null) {
            throw new ConfigurationException("the changePublisher bean has no heartbeat: the feed's accounts are held"
                    + " by the worker's heartbeat (routes/beans.camel.yaml sets it to #bean:inboxWorker)");
        }
    }

    /**
     * Nothing to take: the first {@link #publishDue()} starts the feed, so a bundle without its poll holds nothing. A
     * start after a stop publishes again: the feed's poll route stops this bean with it, and its new version (a route
     * file saved into the running process) starts it again.
     */
    @Override
    protected void begin() {
        synchronized (this) {
            stopped = false;
        }
        if (!inProcess) {
            LOG.info("Feed: the in-process publisher is off (metakit.feed.publisher=external): position_changes is"
                    + " published by what reads it from the WAL (docs/change-feed.md, \"Past one publisher: Debezium\")");
        }
    }

    /**
     * Stops taking accounts; sends in flight finish (or fail and are sent again later), up to a few seconds. Then gives
     * this boot's accounts up, so the other instances publish them at once rather than after dead-after.
     */
    @Override
    protected void end() throws Exception {
        FeedParts p;
        synchronized (this) {
            stopped = true;
            p = parts;
            parts = null; // a start after this one makes new parts at its first poll
            turns = null;
        }
        if (p == null) {
            return;
        }
        if (!p.stop()) {
            return; // a send may still be under way: its accounts stay this boot's until its heartbeat stops
        }
        try (Connection c = dataSource.getConnection()) {
            p.ownership().releaseAll(c);
        } catch (SQLException e) {
            LOG.warn("Feed: could not give this instance's accounts up (the others take them once its heartbeat"
                    + " is {} ms old): {}", heartbeat.deadAfter().toMillis(), e.getMessage());
        }
    }

    /**
     * The backstop: offers every account with unpublished changes (starting the feed at its first call). Returns how
     * many accounts it found.
     */
    public int publishDue() {
        if (!inProcess) {
            return 0; // metakit.feed.publisher=external: Debezium publishes; nothing here starts
        }
        FeedParts p = parts();
        if (p == null) {
            return 0;
        }
        List<Long> due;
        try (Connection c = dataSource.getConnection()) {
            due = p.ownership().notHeldByOthers(c, dueAccounts.next(c, maxAccountsPerPoll));
        } catch (SQLException e) {
            // every poll would say the same while the database is away: once when it starts, once when it ends
            if (!pollFailing) {
                LOG.warn("Feed: cannot read the unpublished changes, retrying every poll: {}", e.getMessage());
                pollFailing = true;
            }
            return 0;
        }
        if (pollFailing) {
            LOG.info("Feed: the unpublished changes can be read again");
            pollFailing = false;
        }
        due.forEach(this::offer);
        return due.size();
    }

    /** Gives the account a turn, or another one after the turn it has; not while it backs off (its retry offers it). */
    void offer(long account) {
        AccountTurns t = turns;
        if (t != null) {
            t.offer(account);
        }
    }

    private boolean running() {
        return !stopped && getCamelContext().getStatus().isStarted();
    }

    /** The running parts, made at the first call; null once stopped or while the context is not started. */
    private FeedParts parts() {
        FeedParts p = parts;
        if (p != null || !running()) {
            return p;
        }
        synchronized (this) {
            if (parts == null && !stopped) {
                checkSettings();
                FeedParts started = startParts();
                AccountTurns t = new AccountTurns(concurrency, started.pool(),
                        a -> running() && !started.backoff().backingOff(a));
                FeedRound round = new FeedRound(dataSource, started, counts, batchSize, this::running, t::reading,
                        this::offer, t::othersQueued);
                t.rounds(round::publish);
                turns = t;
                parts = started;
                started.wakeups().start();
            }
            return parts;
        }
    }

    private FeedParts startParts() {
        FeedOwnership ownership = new FeedOwnership(heartbeat.beatingBoot(), heartbeat.deadAfter(), nanoClock);
        return FeedParts.start(getCamelContext().getEndpoint(outlet), json, concurrency,
                new FeedBackoff(backoffBaseMillis, backoffMaxMillis),
                new FeedWakeups(dataSource, this::offer, this::publishDue), ownership);
    }

    /** Told of every change the outlet confirmed (repeats included), in seq order per account. */
    public void onSent(Consumer<FeedChange> listener) {
        counts.onSent(listener);
    }

    /** How long the oldest unpublished change has waited (zero when none waits): the feed's lag. */
    public static Duration lag(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return ChangeStore.lag(c);
        }
    }

    /** Changes the outlet took and that were marked published, since this instance started. */
    public long publishedCount() {
        return counts.published.get();
    }

    /**
     * Changes the outlet took that this boot could not mark published: the account had been taken over while it stood
     * still (the new owner sends them again with the same id).
     */
    public long fencedCount() {
        return counts.fenced.get();
    }

    /** Publish attempts that failed (the outlet's error, or the database's), each backing its account off. */
    public long failureCount() {
        return counts.failures.get();
    }

    /** The account's failures since the outlet last took one of its changes (0: not backing off). */
    int backoffFailures(long account) {
        FeedParts p = parts;
        return p == null ? 0 : p.backoff().failures(account);
    }

    /** Whether the publisher is listening for committed changes now (false before its first poll). */
    boolean listening() {
        FeedParts p = parts;
        return p != null && p.wakeups().listening();
    }

    /** {@code in-process} (this publisher) or {@code external} (off: Debezium publishes the table). */
    public void setPublisher(String publisher) {
        this.inProcess = EnumeratedSettings.feedPublishedInProcess(publisher);
    }

    /** False when the feed is published by something else (metakit.feed.publisher=external): this one is off. */
    public boolean isInProcess() {
        return inProcess;
    }

    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** The heartbeat ({@code inbox_instances}) that holds this instance's accounts of the feed: the worker's. */
    public void setHeartbeat(Heartbeat heartbeat) {
        this.heartbeat = heartbeat;
    }

    /** Tests: this process's monotonic clock as the leases read it (set before the first publish). */
    void nanoClock(LongSupplier clock) {
        this.nanoClock = clock;
    }

    /** The endpoint the changes go to: the outlet route of routes/changes.camel.yaml. */
    public void setOutlet(String outlet) {
        this.outlet = outlet;
    }

    /**
     * Publishing rounds at once by this instance, each taking every account queued at its start, and accounts handing
     * their changes to the outlet at once.
     */
    public void setConcurrency(int concurrency) {
        if (concurrency < 1) {
            throw new IllegalArgumentException("METAKIT_FEED_CONCURRENCY must be at least 1, got " + concurrency);
        }
        this.concurrency = concurrency;
    }

    public void setBackoffBaseMillis(long millis) {
        this.backoffBaseMillis = Math.max(1, millis);
    }

    public void setBackoffMaxMillis(long millis) {
        this.backoffMaxMillis = Math.max(1, millis);
    }

    public void setMaxAccountsPerPoll(int n) {
        this.maxAccountsPerPoll = Math.max(1, n);
    }

    /** Changes of one account sent before one statement marks them published. */
    public void setBatchSize(int n) {
        this.batchSize = Math.max(1, n);
    }
}
