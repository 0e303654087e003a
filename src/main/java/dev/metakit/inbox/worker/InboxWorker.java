package dev.metakit.inbox.worker;

import dev.metakit.inbox.metakit.MalformedPayloadException;
import dev.metakit.inbox.metakit.MetaKitApiException;
import dev.metakit.inbox.metakit.MetaKitJson;
import dev.metakit.inbox.metakit.WebhookEvent;
import dev.metakit.inbox.reconcile.AccountReconciler;
import dev.metakit.inbox.reconcile.Hint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.lang.management.ManagementFactory;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The worker's logic, called by {@code routes/worker.camel.yaml}: claims a batch of inbox rows (whole accounts: the
 * due rows of the accounts of the next {@code batchSize} due rows, at most {@code claimMaxRows}), settles at once
 * what needs no reconcile (non-trade events), and hands the route one {@link AccountWork} per account with trade
 * events, so a burst of events for one account costs one reconcile. Rows are marked processed only after their
 * reconcile committed. A failed reconcile backs the account off: all its pending rows wait for one retry time, and
 * so do the rows that arrive meanwhile ({@link InboxQueue#backOff}); a row is failed once its own attempts are spent.
 * While rows are being worked their lease is renewed every third of it, so a drain longer than the lease (a slow
 * API, a large claim) is not taken over by another instance; rows of an instance that died are, once it runs out.
 * An account this instance is still working is left out of its next claims until that work ends. Work that never
 * ends (a drain cut short) is given up after {@value #MAX_HOLD_LEASES} leases: no longer renewed nor kept out.
 */
public class InboxWorker {
    private static final Logger LOG = LoggerFactory.getLogger(InboxWorker.class);
    static final int MAX_HOLD_LEASES = 10;

    private DataSource dataSource;
    private AccountReconciler accountReconciler;
    private String tradeEvents = "position.*";
    private int batchSize = 500;
    private int claimMaxRows = 5000;
    private long leaseSeconds = 120;
    private int maxAttempts = 8;
    private long backoffBaseMillis = 1000;
    private long backoffMaxMillis = 300_000;
    private String instanceId = ManagementFactory.getRuntimeMXBean().getName();

    private InboxQueue queue;
    private TradeEvents trade;
    private RetryPolicy retryPolicy;
    private final MetaKitJson json = new MetaKitJson();

    private ScheduledExecutorService leaseRenewal;
    private volatile boolean renewalFailing;

    private final AtomicLong processed = new AtomicLong();
    private final AtomicLong retried = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private volatile boolean claimFailing;
    /**
     * The work this instance claimed and has not completed or failed, by account: its accounts are left out of the
     * next claims, its rows' leases are renewed.
     */
    private final Map<Long, Held> working = new ConcurrentHashMap<>();

    /** Work in hand and when it is given up (nanoTime): renewals stop a lease before, so its rows are free by then. */
    private record Held(AccountWork work, long giveUp, long lastRenewal) {
    }

    public void start() {
        queue = new InboxQueue(dataSource);
        trade = new TradeEvents(tradeEvents);
        retryPolicy = new RetryPolicy(maxAttempts, Duration.ofMillis(backoffBaseMillis), Duration.ofMillis(backoffMaxMillis));
        leaseRenewal = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "metakit-lease-renewal");
            t.setDaemon(true);
            return t;
        });
        long every = Math.max(100, leaseSeconds * 1000 / 3);
        leaseRenewal.scheduleWithFixedDelay(this::renewLeases, every, every, TimeUnit.MILLISECONDS);
    }

    public void stop() {
        if (leaseRenewal != null) {
            leaseRenewal.shutdownNow();
        }
    }

    void renewLeases() {
        long now = System.nanoTime();
        List<String> keys = working.values().stream().filter(h -> h.lastRenewal() - now > 0)
                .flatMap(h -> h.work().keys().stream()).toList();
        if (keys.isEmpty()) {
            return;
        }
        try {
            queue.renew(instanceId, keys, Duration.ofSeconds(leaseSeconds));
            if (renewalFailing) {
                LOG.info("Worker renews its leases again");
                renewalFailing = false;
            }
        } catch (SQLException | RuntimeException e) {
            // the next renewal tries again; if the leases run out meanwhile, another instance may take the rows over
            if (!renewalFailing) {
                LOG.warn("Worker cannot renew the lease of {} inbox rows (retrying): {}", keys.size(), e.getMessage());
                renewalFailing = true;
            }
        }
    }

    /** Claims the next batch; returns the accounts to reconcile (possibly none). */
    public synchronized List<AccountWork> claim() throws SQLException {
        long now = System.nanoTime();
        // work held past its limit was lost (a drain cut short): no longer renewed, its rows are anyone's again, ours too
        working.values().removeIf(h -> h.giveUp() - now <= 0);
        List<InboxRow> rows;
        try {
            rows = queue.claim(instanceId, batchSize, claimMaxRows, Duration.ofSeconds(leaseSeconds),
                    Set.copyOf(working.keySet()));
        } catch (SQLException e) {
            // the poll runs every second: one line per outage, not a stack trace per poll
            if (!claimFailing) {
                LOG.warn("Worker cannot claim inbox rows (retrying every poll, quiet until it works again): {}",
                        e.getMessage());
                claimFailing = true;
            }
            return List.of();
        }
        if (claimFailing) {
            LOG.info("Worker claims inbox rows again");
            claimFailing = false;
        }
        if (rows.isEmpty()) {
            return List.of();
        }
        Map<Long, List<InboxRow>> tradeRows = new LinkedHashMap<>();
        Map<Long, List<WebhookEvent>> tradeEventsByAccount = new LinkedHashMap<>();
        List<String> settled = new ArrayList<>();
        Set<Long> accountsSeen = new LinkedHashSet<>();
        for (InboxRow row : rows) {
            WebhookEvent event;
            try {
                event = json.webhookEvent(row.body());
            } catch (MalformedPayloadException e) {
                fail(List.of(row), e, row.accountId() == null ? "no account" : "account " + row.accountId());
                continue;
            }
            String name = row.event() != null ? row.event() : event.event();
            Long account = event.accountId() != null ? event.accountId() : row.accountId();
            if (account != null) {
                accountsSeen.add(account);
            }
            if (!trade.isTrade(name)) {
                settled.add(row.key());
            } else if (account == null) {
                fail(List.of(row), new MalformedPayloadException("trade event without account_id"), "no account");
            } else {
                tradeRows.computeIfAbsent(account, a -> new ArrayList<>()).add(row);
                tradeEventsByAccount.computeIfAbsent(account, a -> new ArrayList<>()).add(event);
            }
        }
        accountReconciler.registerAccounts(accountsSeen);
        if (!settled.isEmpty()) {
            processed.addAndGet(queue.markProcessed(settled));
        }
        List<AccountWork> work = new ArrayList<>(tradeRows.size());
        // counted from after the claim: never ends before the rows' lease in the database
        long lease = Duration.ofSeconds(leaseSeconds).toNanos();
        long giveUp = System.nanoTime() + lease * MAX_HOLD_LEASES;
        tradeRows.forEach((account, list) -> {
            AccountWork w = new AccountWork(account, list, Hint.from(tradeEventsByAccount.get(account)));
            work.add(w);
            working.put(account, new Held(w, giveUp, giveUp - lease));
        });
        return work;
    }

    /** The account's reconcile committed: its rows are applied. */
    public void completed(AccountWork work) throws SQLException {
        try {
            processed.addAndGet(queue.markProcessed(work.accountId(), work.keys()));
        } finally {
            working.remove(work.accountId());
        }
    }

    /**
     * The account's reconcile failed: the rows whose own attempts are spent are failed, and the account backs off,
     * with every pending row of it (claimed or not) waiting for its retry time.
     */
    public void failed(AccountWork work, Throwable cause) throws SQLException {
        try {
            accountReconciler.recordFailure(work.accountId(), describe(cause));
            backOff(work, cause);
        } finally {
            working.remove(work.accountId());
        }
    }

    /** "account 2, tickets [77, 78]": what a log line about this work names (never a body). */
    static String about(AccountWork work) {
        Set<Long> tickets = new java.util.TreeSet<>();
        work.hints().forEach(h -> tickets.add(h.ticket()));
        return "account " + work.accountId() + (tickets.isEmpty() ? "" : ", tickets " + tickets);
    }

    private void backOff(AccountWork work, Throwable cause) {
        String error = describe(cause);
        String about = about(work);
        List<InboxRow> again = new ArrayList<>();
        List<InboxRow> spent = new ArrayList<>();
        try {
            if (cause instanceof MetaKitApiException api && api.unauthorized()) {
                queue.backOff(work.accountId(), work.keys(), error, Duration.ofMillis(backoffMaxMillis), false);
                return;
            }
            for (InboxRow row : work.rows()) {
                (retryPolicy.exhausted(row.attempts()) ? spent : again).add(row);
            }
            if (!spent.isEmpty()) {
                failed.addAndGet(queue.markFailed(spent.stream().map(InboxRow::key).toList(), error));
                for (InboxRow row : spent) {
                    LOG.warn("Inbox row {} failed after {} attempts ({}): {}", row.key(), row.attempts(), about,
                            error);
                }
            }
            // the account's delay follows its longest-tried row still going (a Retry-After overrides it)
            int attempts = again.stream().mapToInt(InboxRow::attempts).max().orElse(work.attempts());
            Duration delay = retryPolicy.delay(attempts, cause);
            InboxQueue.Backoff backoff = queue.backOff(work.accountId(), again.stream().map(InboxRow::key).toList(),
                    error, delay, true);
            retried.addAndGet(backoff.claimedRows());
            LOG.info("Retrying {} inbox rows in {} ms (attempt {} of {}, {}), {} more of the account's rows wait with"
                            + " them: {}", backoff.claimedRows(), delay.toMillis(), attempts, maxAttempts, about,
                    backoff.waitingRows(), error);
        } catch (SQLException e) {
            // the lease runs out and the rows are claimed again: nothing is lost
            LOG.warn("Could not record the failure of {} inbox rows ({}): {}", work.rows().size(), about,
                    e.getMessage());
        }
    }

    /** A row's own failure (its body), not its account's: it alone is retried, or failed once its attempts are spent. */
    private void fail(List<InboxRow> rows, Throwable cause, String about) {
        String error = describe(cause);
        int attempts = rows.stream().mapToInt(InboxRow::attempts).max().orElse(0);
        List<String> keys = rows.stream().map(InboxRow::key).toList();
        try {
            if (retryPolicy.exhausted(attempts)) {
                failed.addAndGet(queue.markFailed(keys, error));
                for (InboxRow row : rows) {
                    LOG.warn("Inbox row {} failed after {} attempts ({}): {}", row.key(), row.attempts(), about,
                            error);
                }
            } else {
                Duration delay = retryPolicy.delay(attempts, cause);
                retried.addAndGet(queue.retryLater(keys, error, delay, true));
                LOG.info("Retrying {} inbox rows in {} ms (attempt {} of {}, {}): {}", keys.size(), delay.toMillis(),
                        attempts, maxAttempts, about, error);
            }
        } catch (SQLException e) {
            // the lease runs out and the rows are claimed again: nothing is lost
            LOG.warn("Could not record the failure of {} inbox rows ({}): {}", keys.size(), about, e.getMessage());
        }
    }

    static String describe(Throwable cause) {
        if (cause instanceof MetaKitApiException || cause instanceof MalformedPayloadException) {
            return cause.getMessage();
        }
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage() == null ? "" : ": " + root.getMessage();
        return root.getClass().getSimpleName() + message;
    }

    /** Puts every failed row back in the queue (operators' command); returns how many. */
    public int requeueFailed() throws SQLException {
        int n = queue.requeueFailed();
        LOG.info("Requeued {} failed inbox rows", n);
        return n;
    }

    public InboxQueue.Backlog backlog() throws SQLException {
        return queue.backlog();
    }

    public long processedCount() { return processed.get(); }
    public long retriedCount() { return retried.get(); }
    public long failedCount() { return failed.get(); }

    public void setDataSource(DataSource dataSource) { this.dataSource = dataSource; }
    public void setAccountReconciler(AccountReconciler accountReconciler) { this.accountReconciler = accountReconciler; }
    public void setTradeEvents(String tradeEvents) { this.tradeEvents = tradeEvents; }
    public void setBatchSize(int batchSize) { this.batchSize = batchSize; }
    /** A claim takes the due rows of the accounts of the next batchSize due rows: at most this many rows. */
    public void setClaimMaxRows(int claimMaxRows) { this.claimMaxRows = claimMaxRows; }
    public void setLeaseSeconds(long leaseSeconds) { this.leaseSeconds = leaseSeconds; }
    public void setMaxAttempts(int maxAttempts) { this.maxAttempts = maxAttempts; }
    public void setBackoffBaseMillis(long millis) { this.backoffBaseMillis = millis; }
    public void setBackoffMaxMillis(long millis) { this.backoffMaxMillis = millis; }
    public void setInstanceId(String instanceId) { if (instanceId != null && !instanceId.isBlank()) this.instanceId = instanceId; }
}
