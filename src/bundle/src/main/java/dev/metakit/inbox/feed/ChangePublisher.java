package dev.metakit.inbox.feed;

import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.ContextBean;
import dev.metakit.inbox.config.EnumeratedSettings;
import dev.metakit.inbox.config.Required;
import dev.metakit.inbox.worker.InboxWorker;
import org.apache.camel.Endpoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Publishes the change feed: every change of {@code position_changes} to the outlet route
 * ({@code direct:metakit-change-outlet} in {@code routes/changes.camel.yaml}), at least once, in seq order per account.
 *
 * <p>An account is published when it is offered: by {@link FeedWakeups} when a reconcile commits a change of it
 * (PostgreSQL {@code NOTIFY}), by the retry of its backoff, or by {@link #publishDue()}, the feed's poll route, which
 * is the backstop (and starts the rest at its first call). An offered account gets a turn on a pool thread unless it
 * has one already (then it gets another turn after it) or is backing off. In a turn the publisher takes the account
 * ({@link AccountOwnership}: by the worker's heartbeat, so another live instance owning it publishes it instead, and a
 * crashed or paused one loses it within dead-after) and sends its unpublished changes in batches: each batch under a
 * lease valid by this process's clock, in seq order without waiting between sends ({@link OutletBatch}), then one
 * statement, fenced by the ownership's epoch, marks the batch's confirmed prefix published. A failure ends the turn at the first change not confirmed, which is where the
 * next turn starts again (later changes the outlet took meanwhile go again with the same id), so a change is never
 * skipped nor overtaken; the account backs off ({@link FeedBackoff}: forgiven by the next success).
 */
public class ChangePublisher extends ContextBean {
    private static final Logger LOG = LoggerFactory.getLogger(ChangePublisher.class);
    static final String DEFAULT_OUTLET = "{{metakit.feed.outlet-endpoint}}";
    static final int DEFAULT_BATCH_SIZE = 500;
    /** batches in one turn: then the account waits behind the other accounts offered meanwhile */
    private static final int BATCHES_PER_TURN = 20;

    private final ObjectWriter json = JsonMapper.builder().build().writer();
    /** accounts with a turn queued or running, and whether they are offered again meanwhile */
    private final Map<Long, Boolean> turns = new ConcurrentHashMap<>();
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong fenced = new AtomicLong();
    private final List<Consumer<FeedChange>> sentListeners = new CopyOnWriteArrayList<>();

    private DataSource dataSource;
    private InboxWorker inboxWorker;
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

    @Override
    protected void checkSettings() {
        Required.setting(concurrency, "metakit.feed.concurrency");
        Required.setting(backoffBaseMillis, "metakit.feed.backoff-base-millis");
        Required.setting(backoffMaxMillis, "metakit.feed.backoff-max-millis");
        if (inboxWorker == null) {
            throw new ConfigurationException("the changePublisher bean has no inboxWorker: the feed's accounts are held"
                    + " by that worker's heartbeat (routes/beans.camel.yaml sets it to #bean:inboxWorker)");
        }
    }

    /** Nothing to take: the first {@link #publishDue()} starts the feed, so a bundle without its poll holds nothing. */
    @Override
    protected void begin() {
        if (!inProcess) {
            LOG.info("Feed: the in-process publisher is off (metakit.feed.publisher=external): position_changes is"
                    + " published by what reads it from the WAL (README \"Past one publisher: Debezium\")");
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
                    + " is {} ms old): {}", inboxWorker.deadAfter().toMillis(), e.getMessage());
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
        FeedParts p = parts;
        if (p == null || !running() || p.backoff().backingOff(account)) {
            return;
        }
        boolean[] fresh = {false};
        turns.compute(account, (a, again) -> {
            fresh[0] = again == null;
            return again != null;
        });
        if (fresh[0]) {
            queueTurn(p, account);
        }
    }

    private void queueTurn(FeedParts p, long account) {
        try {
            p.pool().execute(() -> turn(p, account));
        } catch (RejectedExecutionException stopping) {
            turns.remove(account);
        }
    }

    private void turn(FeedParts p, long account) {
        boolean more = false;
        try {
            more = publishAccount(p, account);
        } finally {
            boolean goOn = more;
            Boolean again = turns.compute(account, (a, offered) ->
                    (goOn || Boolean.TRUE.equals(offered)) && running() && !p.backoff().backingOff(a) ? false : null);
            if (again != null) {
                queueTurn(p, account); // behind the accounts offered meanwhile
            }
        }
    }

    /** One turn of the account, unless another live instance owns it. Returns whether changes are left. */
    private boolean publishAccount(FeedParts p, long account) {
        try (Connection c = dataSource.getConnection()) {
            FeedOwnership.Lease lease = p.ownership().take(c, account);
            if (lease == null) {
                return false;
            }
            return publishBatches(p, c, lease); // the account stays this boot's after the turn, until a clean stop
        } catch (SQLException e) {
            failed(p, account, "database: " + e.getMessage()); // counted too: the change waits all the same
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            failed(p, account, e.getMessage());
        }
        return false;
    }

    private boolean publishBatches(FeedParts p, Connection c, FeedOwnership.Lease owned)
            throws SQLException, InterruptedException {
        long account = owned.accountId();
        FeedOwnership.Lease lease = owned;
        long afterSeq = 0;
        for (int n = 0; n < BATCHES_PER_TURN; n++) {
            if (!running()) {
                return false; // the outlet route stops with the context: what is left goes out after the restart
            }
            // by this process's clock: one that stood still past its lease confirms the account in the database first
            lease = p.ownership().stillOwns(c, lease);
            if (lease == null) {
                LOG.info("Feed: account {} is no longer this instance's to publish (its lease ran out while it stood"
                        + " still or could not beat, and the account changed hands or waits for its next heartbeat);"
                        + " nothing more sent for it here", account);
                return false;
            }
            if (afterSeq == 0) {
                // offers made so far are answered by this read of every unpublished change (replayed ones too): a
                // change is announced only once committed, so it is visible here; only offers after it ask for
                // another turn (without this, each change of a steady trickle cost an empty turn)
                turns.replace(account, true, false);
            }
            List<FeedChange> batch = ChangeStore.unpublished(c, account, afterSeq, batchSize);
            if (batch.isEmpty()) {
                return false;
            }
            FeedOwnership.Lease under = lease;
            // each send only while the lease is valid by this process's clock: a freeze in the middle of a batch
            // sends nothing more once it woke up past the lease (the fenced mark below refuses what went before)
            OutletBatch.Result sent = p.outlet().send(batch,
                    () -> running() && p.ownership().mayStillSend(under));
            int confirmed = sent.confirmed();
            if (confirmed > 0) {
                List<FeedChange> taken = batch.subList(0, confirmed);
                taken.forEach(change -> sentListeners.forEach(l -> l.accept(change)));
                List<Long> ids = taken.stream().map(FeedChange::changeId).toList();
                int marked = p.ownership().markPublished(c, lease, ids);
                published.addAndGet(marked);
                int failed = p.backoff().failures(account);
                if (p.backoff().succeeded(account) && failed > 1) {
                    LOG.info("Feed: account {} publishes again after {} failures in a row", account, failed);
                }
                if (marked < ids.size()) {
                    fenced.addAndGet(ids.size() - marked);
                    LOG.warn("Feed: account {} is no longer this instance's to publish ({} of {} marked): taken over"
                            + " meanwhile (this instance stood still), its new owner sends the rest again with the same"
                            + " ids", account, marked, ids.size());
                    return false;
                }
                afterSeq = taken.get(confirmed - 1).seq();
            }
            if (confirmed < batch.size()) {
                if (sent.error() == null && running() && !p.ownership().mayStillSend(lease)) {
                    continue; // the lease ran out mid-batch: the next round confirms it or ends the turn
                }
                if (sent.error() != null) {
                    failed(p, account, "the outlet did not take change " + batch.get(confirmed).id() + ": "
                            + sent.error().getMessage());
                }
                return false;
            }
            if (batch.size() < batchSize) {
                return false;
            }
        }
        return true;
    }


    private boolean running() {
        return !stopped && getCamelContext().getStatus().isStarted();
    }

    private void failed(FeedParts p, long account, String why) {
        failures.incrementAndGet();
        FeedBackoff.Backoff b = p.backoff().failed(account);
        long delay = b.delayMillis(System.nanoTime());
        try {
            p.retries().schedule(() -> offer(account), delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            return;
        }
        // a single refusal is tried again at once and counted, not logged (a flaky outlet would fill the log); one
        // line when an account fails twice in a row, then one per doubling of its backoff
        if (b.failures() > 1 && Integer.bitCount(b.failures() - 1) == 1) {
            LOG.warn("Feed: account {} stopped, failure {} in a row, next try in {} ms: {}", account, b.failures(),
                    delay, why);
        } else if (b.failures() == 1) {
            LOG.debug("Feed: account {} tried again at once: {}", account, why);
        }
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
                parts = startParts();
                parts.wakeups().start();
            }
            return parts;
        }
    }

    private FeedParts startParts() {
        AccountOwnership ownership = new AccountOwnership(
                new FeedOwnership(inboxWorker.beatingBoot(), inboxWorker.deadAfter(), nanoClock));
        return FeedParts.start(getCamelContext().getEndpoint(outlet), json, concurrency,
                new FeedBackoff(backoffBaseMillis, backoffMaxMillis),
                new FeedWakeups(dataSource, this::offer, this::publishDue), ownership);
    }

    /** Told of every change the outlet confirmed (repeats included), in seq order per account. */
    public void onSent(Consumer<FeedChange> listener) {
        sentListeners.add(listener);
    }

    /** How long the oldest unpublished change has waited (zero when none waits): the feed's lag. */
    public static Duration lag(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return ChangeStore.lag(c);
        }
    }

    /** Changes the outlet took and that were marked published, since this instance started. */
    public long publishedCount() {
        return published.get();
    }

    /**
     * Changes the outlet took that this boot could not mark published: the account had been taken over while it stood
     * still (the new owner sends them again with the same id).
     */
    public long fencedCount() {
        return fenced.get();
    }

    /** Publish attempts that failed (the outlet's error, or the database's), each backing its account off. */
    public long failureCount() {
        return failures.get();
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

    /** The worker whose boot and heartbeat ({@code inbox_instances}) hold this instance's accounts of the feed. */
    public void setInboxWorker(InboxWorker inboxWorker) {
        this.inboxWorker = inboxWorker;
    }

    /** Tests: this process's monotonic clock as the leases read it (set before the first publish). */
    void nanoClock(LongSupplier clock) {
        this.nanoClock = clock;
    }

    /** The endpoint the changes go to: the outlet route of routes/changes.camel.yaml. */
    public void setOutlet(String outlet) {
        this.outlet = outlet;
    }

    /** Accounts published at once by this instance. */
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
