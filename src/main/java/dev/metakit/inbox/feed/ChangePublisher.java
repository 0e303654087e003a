package dev.metakit.inbox.feed;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.metakit.inbox.config.ContextBean;
import dev.metakit.inbox.config.EnumeratedSettings;
import dev.metakit.inbox.config.Required;
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
 * thread, unless that account is already in hand here or backing off. For one account, the thread takes the
 * account's {@link AccountPublishLock} (another instance holding it publishes the account instead), then sends its
 * changes one by one: the next only after the outlet returned without an exception for the previous one, which is
 * then marked published. A failure stops the account where it is and backs it off (doubling up to a maximum), so a
 * change is never skipped; a change sent but not marked (a crash in between) is sent again with the same id.
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
    private final List<Consumer<FeedChange>> sentListeners = new CopyOnWriteArrayList<>();

    private DataSource dataSource;
    private volatile ProducerTemplate producer;
    private String outlet = DEFAULT_OUTLET;
    private Integer concurrency;
    private Long backoffBaseMillis;
    private Long backoffMaxMillis;
    private int maxAccountsPerPoll = 1000;
    private volatile ExecutorService pool;
    private volatile boolean stopped;
    private volatile boolean pollFailing;
    // metakit.feed.publisher: false when something else (Debezium) publishes position_changes
    private boolean inProcess = true;

    private record Backoff(int failures, long retryAtNanos) {
    }

    @Override
    protected void checkSettings() {
        Required.setting(concurrency, "metakit.feed.concurrency");
        Required.setting(backoffBaseMillis, "metakit.feed.backoff-base-millis");
        Required.setting(backoffMaxMillis, "metakit.feed.backoff-max-millis");
    }

    /** Nothing to take: the pool is created at the first publish, so a bundle without the feed's poll holds none. */
    @Override
    protected void begin() {
        if (!inProcess) {
            LOG.info("Feed: the in-process publisher is off (metakit.feed.publisher=external): position_changes is"
                    + " published by what reads it from the WAL (README \"Past one publisher: Debezium\")");
        }
    }

    /** Stops taking accounts; sends in flight finish (or fail and are sent again later), up to a few seconds. */
    @Override
    protected void end() throws InterruptedException {
        stopped = true;
        ExecutorService p = pool;
        if (p != null) {
            p.shutdown();
            if (!p.awaitTermination(5, TimeUnit.SECONDS)) {
                p.shutdownNow();
            }
        }
    }

    /** Hands every account with unpublished changes, not in hand nor backing off, to the pool. Returns how many. */
    public int publishDue() {
        if (!inProcess || !running()) {
            return 0;
        }
        ExecutorService threads = pool();
        List<Long> due;
        try (Connection c = dataSource().getConnection()) {
            due = ChangeStore.accountsWithUnpublished(c, maxAccountsPerPoll);
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

    /** Publishes the account's unpublished changes in seq order, unless another instance is publishing it. */
    void publishAccount(long account) {
        try (Connection c = dataSource().getConnection()) {
            if (!AccountPublishLock.tryLock(c, account)) {
                return;
            }
            try {
                drain(c, account);
            } finally {
                if (!AccountPublishLock.unlock(c, account)) {
                    LOG.warn("Feed: the publish lock of account {} was not held at its release", account);
                }
            }
        } catch (SQLException e) {
            failed(account, "database: " + e.getMessage()); // counted too: the change waits all the same
        } catch (RuntimeException e) {
            failed(account, e.getMessage());
        }
    }

    private void drain(Connection c, long account) throws SQLException {
        while (running()) {
            List<FeedChange> batch = ChangeStore.unpublished(c, account, BATCH);
            for (FeedChange change : batch) {
                if (!running()) {
                    return; // the outlet route stops with the context: what is left goes out after the restart
                }
                Exception error = send(change);
                if (error != null) {
                    failed(account, "the outlet did not take change " + change.id() + ": " + error.getMessage());
                    return;
                }
                sentListeners.forEach(l -> l.accept(change));
                ChangeStore.markPublished(c, change.changeId());
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

    /** Publish attempts that failed (the outlet's error, or the database's), each backing its account off. */
    public long failureCount() {
        return failures.get();
    }

    /** {@code in-process} (this publisher) or {@code external} (off: Debezium publishes the table). */
    public void setPublisher(String publisher) {
        this.inProcess = inProcess(publisher);
    }

    /** Whether the setting's word says the in-process publisher publishes; an unknown word is refused. */
    static boolean inProcess(String publisher) {
        String p = publisher.trim();
        if (!EnumeratedSettings.FEED_PUBLISHERS.contains(p)) {
            throw new IllegalArgumentException("METAKIT_FEED_PUBLISHER must be one of "
                    + String.join(", ", EnumeratedSettings.FEED_PUBLISHERS) + ", got '" + publisher + "'");
        }
        return p.equals("in-process");
    }

    /** False when the feed is published by something else (metakit.feed.publisher=external): this one is off. */
    public boolean isInProcess() {
        return inProcess;
    }

    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
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
