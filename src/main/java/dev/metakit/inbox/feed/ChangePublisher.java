package dev.metakit.inbox.feed;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.ContextBean;
import dev.metakit.inbox.config.Required;
import dev.metakit.inbox.worker.InboxWorker;
import org.apache.camel.Exchange;
import org.apache.camel.ProducerTemplate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes the change feed: every change of {@code position_changes} to the outlet route
 * ({@code direct:metakit-change-outlet} in {@code routes/changes.camel.yaml}), at least once, in seq order per account.
 *
 * <p>{@link #publishDue()} (called by the feed's poll route) hands each account with unpublished changes to a pool
 * thread, unless that account is already in hand here, backing off, or owned by another live instance. For one
 * account, the thread takes or confirms this boot's ownership of it ({@link FeedOwnership}: by the worker's heartbeat,
 * so a crashed or paused instance loses its accounts within the worker's dead-after), then sends its changes one by
 * one: each only while its lease is valid by this process's clock, the next only after the outlet returned without an
 * exception for the previous one, which is then marked published if this boot still owns the account (fenced by the
 * ownership's epoch). A failure stops the account where it is and backs it off (doubling up to a maximum), so a
 * change is never skipped; a change sent but not marked (a crash in between, or a takeover) is sent again with the
 * same id.
 */
public class ChangePublisher extends ContextBean {
    private static final Logger LOG = LoggerFactory.getLogger(ChangePublisher.class);
    static final String DEFAULT_OUTLET = "direct:metakit-change-outlet";
    private static final int BATCH = 100;

    private final ObjectMapper json = JsonMapper.builder().build();
    private final Set<Long> inHand = ConcurrentHashMap.newKeySet();
    private final Map<Long, Backoff> backoffs = new ConcurrentHashMap<>();
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong fenced = new AtomicLong();
    private final List<Consumer<FeedChange>> sentListeners = new CopyOnWriteArrayList<>();

    private DataSource dataSource;
    private InboxWorker inboxWorker;
    private volatile FeedOwnership ownership;
    private LongSupplier nanoClock = System::nanoTime;
    private volatile ProducerTemplate producer;
    private String outlet = DEFAULT_OUTLET;
    private Integer concurrency;
    private Long backoffBaseMillis;
    private Long backoffMaxMillis;
    private int maxAccountsPerPoll = 1000;
    private volatile ExecutorService pool;
    private volatile boolean stopped;
    private volatile boolean pollFailing;

    private record Backoff(int failures, long retryAtNanos) {
    }

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

    /** Nothing to take: the pool is created at the first publish, so a bundle without the feed's poll holds none. */
    @Override
    protected void begin() {
    }

    /**
     * Stops taking accounts; sends in flight finish (or fail and are sent again later), up to a few seconds. Then gives
     * this boot's accounts up, so the other instances publish them at once rather than after dead-after.
     */
    @Override
    protected void end() throws InterruptedException {
        stopped = true;
        ExecutorService p = pool;
        if (p != null) {
            p.shutdown();
            if (!p.awaitTermination(5, TimeUnit.SECONDS)) {
                p.shutdownNow();
                return; // a send may still be under way: its accounts stay this boot's until its heartbeat stops
            }
        }
        FeedOwnership owner = ownership;
        if (owner != null) {
            try (Connection c = dataSource().getConnection()) {
                owner.releaseAll(c);
            } catch (SQLException e) {
                LOG.warn("Feed: could not give this instance's accounts up (the others take them once its heartbeat"
                        + " is {} ms old): {}", inboxWorker.deadAfter().toMillis(), e.getMessage());
            }
        }
    }

    /** Hands every account with unpublished changes, not in hand nor backing off, to the pool. Returns how many. */
    public int publishDue() {
        if (!running()) {
            return 0;
        }
        ExecutorService threads = pool();
        List<Long> due;
        try (Connection c = dataSource().getConnection()) {
            due = ownership().notHeldByOthers(c, ChangeStore.accountsWithUnpublished(c, maxAccountsPerPoll));
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
        int handed = 0;
        long now = System.nanoTime();
        for (long account : due) {
            Backoff b = backoffs.get(account);
            if (b != null && now - b.retryAtNanos() < 0) {
                continue;
            }
            if (inHand.add(account)) {
                handed++;
                threads.execute(() -> {
                    try {
                        publishAccount(account);
                    } finally {
                        inHand.remove(account);
                    }
                });
            }
        }
        return handed;
    }

    /** Publishes the account's unpublished changes in seq order, unless another live instance owns it. */
    void publishAccount(long account) {
        try (Connection c = dataSource().getConnection()) {
            FeedOwnership.Lease lease = ownership().take(c, account);
            if (lease == null) {
                return;
            }
            drain(c, lease);
        } catch (SQLException e) {
            failed(account, "database: " + e.getMessage()); // counted too: the change waits all the same
        } catch (RuntimeException e) {
            failed(account, e.getMessage());
        }
    }

    private void drain(Connection c, FeedOwnership.Lease owned) throws SQLException {
        long account = owned.accountId();
        FeedOwnership.Lease lease = owned;
        while (running()) {
            List<FeedChange> batch = ChangeStore.unpublished(c, account, BATCH);
            for (FeedChange change : batch) {
                if (!running()) {
                    return; // the outlet route stops with the context: what is left goes out after the restart
                }
                // by this process's clock, right before the send: one that stood still past its lease asks first
                lease = ownership().renewed(c, lease);
                if (lease == null) {
                    LOG.info("Feed: account {} is no longer this instance's to publish (its lease ran out while it"
                            + " stood still or could not beat, and the account changed hands or waits for its next"
                            + " heartbeat); nothing more sent for it here", account);
                    return;
                }
                Exception error = send(change);
                if (error != null) {
                    failed(account, "the outlet did not take change " + change.id() + ": " + error.getMessage());
                    return;
                }
                sentListeners.forEach(l -> l.accept(change));
                if (ownership().markPublished(c, lease, List.of(change.changeId())) == 0) {
                    fenced.incrementAndGet();
                    LOG.warn("Feed: change {} went out but account {} was taken over meanwhile (this instance stood"
                            + " still): not marked here, its new owner sends it again with the same id", change.id(),
                            account);
                    return;
                }
                published.incrementAndGet();
            }
            if (batch.size() < BATCH) {
                break;
            }
        }
        if (backoffs.remove(account) != null) {
            LOG.info("Feed: account {} publishes again", account);
        }
    }

    private boolean running() {
        return !stopped && getCamelContext().getStatus().isStarted();
    }

    /** Sends one change; null once the outlet took it, else the error. */
    private Exception send(FeedChange change) {
        String body;
        try {
            body = json.writeValueAsString(change.toJson());
        } catch (JsonProcessingException e) {
            return e;
        }
        Exchange sent = producer().send(outlet, exchange -> {
            var m = exchange.getMessage();
            m.setBody(body);
            m.setHeader("MetaKitChangeId", change.id());
            m.setHeader("MetaKitAccountId", change.accountId());
            m.setHeader("MetaKitTicket", change.ticket());
            m.setHeader("MetaKitChangeKind", change.kind());
            m.setHeader(Exchange.CONTENT_TYPE, "application/json");
        });
        return sent.getException();
    }

    private void failed(long account, String why) {
        failures.incrementAndGet();
        Backoff b = backoffs.compute(account, (a, prev) -> {
            int n = prev == null ? 1 : prev.failures() + 1;
            long delay = Math.min(backoffMaxMillis, backoffBaseMillis << Math.min(n - 1, 20));
            return new Backoff(n, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delay));
        });
        // one line when an account starts failing, then one per doubling of its backoff
        if (Integer.bitCount(b.failures()) == 1) {
            LOG.warn("Feed: account {} stopped, failure {}, next try in {} ms: {}", account, b.failures(),
                    Duration.ofNanos(b.retryAtNanos() - System.nanoTime()).toMillis(), why);
        }
    }

    private ExecutorService pool() {
        if (pool == null) {
            synchronized (this) {
                if (pool == null) {
                    checkSettings();
                    pool = Executors.newFixedThreadPool(concurrency, r -> {
                        Thread t = new Thread(r, "metakit-feed-publisher");
                        t.setDaemon(true);
                        return t;
                    });
                }
            }
        }
        return pool;
    }

    private FeedOwnership ownership() {
        if (ownership == null) {
            synchronized (this) {
                if (ownership == null) {
                    ownership = new FeedOwnership(inboxWorker.beatingBoot(), inboxWorker.deadAfter(), nanoClock);
                }
            }
        }
        return ownership;
    }

    private ProducerTemplate producer() {
        if (producer == null) {
            synchronized (this) {
                if (producer == null) {
                    producer = getCamelContext().createProducerTemplate();
                }
            }
        }
        return producer;
    }

    private DataSource dataSource() {
        return dataSource;
    }

    /** Told of every change the outlet took (repeats included), in the order it took them per account. */
    public void onSent(Consumer<FeedChange> listener) {
        sentListeners.add(listener);
    }

    /** How long the oldest unpublished change has waited (zero when none waits): the feed's lag. */
    public static Duration lag(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return ChangeStore.lag(c);
        }
    }

    /** Changes the outlet took, since this instance started. */
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
}
