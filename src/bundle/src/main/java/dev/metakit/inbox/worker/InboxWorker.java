package dev.metakit.inbox.worker;

import dev.metakit.inbox.config.ContextBean;
import dev.metakit.inbox.config.Required;
import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxAdmin;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.inbox.InstanceLiveness;
import dev.metakit.inbox.metakit.MalformedPayloadException;
import dev.metakit.inbox.metakit.MetaKitApiException;
import dev.metakit.inbox.metakit.MetaKitJson;
import dev.metakit.inbox.metakit.WebhookEvent;
import dev.metakit.inbox.reconcile.AccountReconciler;
import dev.metakit.inbox.reconcile.Hint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.io.IOException;
import java.net.InetAddress;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
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
 * so do the rows that arrive meanwhile ({@link InboxClaims#backOff}); a row is failed once its own attempts are spent.
 * While rows are being worked their lease is renewed every third of it, so a drain longer than the lease (a slow
 * API, a large claim) is not taken over by another instance; rows of an instance that died are, once it runs out.
 * An account this instance is still working is left out of its next claims until that work ends. Work that never
 * ends (a drain cut short) is given up after {@value #MAX_HOLD_LEASES} leases: no longer renewed nor kept out.
 * <p>
 * Claims belong to this boot ({@link Claimant}: the instance id and a token per start). The boot beats in
 * {@code inbox_instances} every {@code heartbeatMillis}; when it stops (a crash, a kill, a pause), its claims are free
 * for the others after {@code deadAfterMillis}, and at once for a restart of the same instance id. Every outcome
 * write checks the token: a boot resumed after its claims were taken over writes nothing for them (counted in
 * {@link #fencedCount()}). An outcome the database cannot take now (it is down) is kept and written as soon as it
 * answers, the account held meanwhile: no row waits for a lease while its instance lives. A row no retry can fix (its
 * body) is failed at its first claim.
 */
public class InboxWorker extends ContextBean {
    private static final Logger LOG = LoggerFactory.getLogger(InboxWorker.class);
    static final int MAX_HOLD_LEASES = 10;

    private DataSource dataSource;
    private AccountReconciler accountReconciler;
    private String tradeEvents;
    private Integer batchSize;
    private Integer claimMaxRows;
    private Long leaseSeconds;
    private Integer maxAttempts;
    private Long backoffBaseMillis;
    private Long backoffMaxMillis;
    private String instanceId;
    private Long heartbeatMillis;
    private Long deadAfterMillis;

    private Claimant self;
    private InboxClaims queue;
    private InstanceLiveness liveness;
    private TradeEvents trade;
    private RetryPolicy retryPolicy;
    private final MetaKitJson json = new MetaKitJson();

    private ScheduledExecutorService upkeep;
    private volatile long nextRenewal;
    private volatile boolean heartbeatFailing;
    private volatile boolean renewalFailing;
    private volatile boolean recordFailing;
    private volatile boolean claimFailing;

    private final AtomicLong processed = new AtomicLong();
    private final AtomicLong retried = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong fenced = new AtomicLong();
    private final Map<PoisonReason, AtomicLong> deadLettered = new ConcurrentHashMap<>();
    /**
     * The work this instance claimed and has not settled (its outcome recorded), by account: its accounts are left out
     * of the next claims, its rows' leases are renewed.
     */
    private final Map<Long, Held> working = new ConcurrentHashMap<>();
    /** Outcomes decided while the database could not take them, in order: written by the upkeep once it can. */
    private final Queue<Outcome> unrecorded = new ConcurrentLinkedQueue<>();

    /** Work in hand and when it is given up (nanoTime): renewals stop a lease before, so its rows are free by then. */
    private record Held(AccountWork work, long giveUp, long lastRenewal) {
    }

    @Override
    protected void checkSettings() {
        Required.setting(tradeEvents, "metakit.trade-events");
        Required.setting(batchSize, "metakit.worker.batch-size");
        Required.setting(claimMaxRows, "metakit.worker.claim-max-rows");
        Required.setting(leaseSeconds, "metakit.worker.lease-seconds");
        Required.setting(maxAttempts, "metakit.worker.max-attempts");
        Required.setting(backoffBaseMillis, "metakit.worker.backoff-base-millis");
        Required.setting(backoffMaxMillis, "metakit.worker.backoff-max-millis");
        Required.setting(instanceId, "metakit.instance-id");
        Required.setting(heartbeatMillis, "metakit.worker.heartbeat-millis");
        Required.setting(deadAfterMillis, "metakit.worker.dead-after-millis");
    }

    @Override
    protected void begin() {
        self = Claimant.newBoot(instanceId.isBlank() ? defaultInstanceId() : instanceId.trim());
        queue = new InboxClaims(dataSource, Duration.ofMillis(deadAfterMillis));
        // an earlier boot of this id silent for two beats is no live sibling: its claims come back at once
        liveness = new InstanceLiveness(dataSource, self, Duration.ofMillis(2 * heartbeatMillis));
        trade = new TradeEvents(tradeEvents);
        retryPolicy = new RetryPolicy(maxAttempts, Duration.ofMillis(backoffBaseMillis), Duration.ofMillis(backoffMaxMillis));
    }

    /*
     * On the first claim, not in begin(): a boot that never claims (a bundle without the worker routes) has nothing
     * to keep alive. The first beat goes before
     * the first claim, so the claim's rows belong to a live boot, and takes back the earlier boots' claims.
     */
    private void beginBeating() {
        if (upkeep != null) {
            return;
        }
        LOG.info("Worker instance {} boot {}: heartbeat every {} ms, its claims free for others {} ms after its last",
                self.instanceId(), self.bootToken(), heartbeatMillis, deadAfterMillis);
        beat();
        // two threads: a heartbeat never waits behind a slow write of the other task
        upkeep = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "metakit-worker-upkeep");
            t.setDaemon(true);
            return t;
        });
        upkeep.scheduleWithFixedDelay(this::beat, heartbeatMillis, heartbeatMillis, TimeUnit.MILLISECONDS);
        nextRenewal = System.nanoTime() + renewalPeriod().toNanos();
        long every = Math.min(heartbeatMillis, renewalPeriod().toMillis());
        upkeep.scheduleWithFixedDelay(this::recordAndRenew, every, every, TimeUnit.MILLISECONDS);
    }

    /**
     * Writes what can still be written, gives back the rows of work not finished, then leaves: the claims this boot
     * still has are free for others at once (if the database is still reachable; else after dead-after).
     */
    @Override
    protected synchronized void end() {
        if (upkeep == null) {
            return;
        }
        upkeep.shutdownNow();
        try {
            // a heartbeat still running would put this boot back after it left: its claims would wait for dead-after
            upkeep.awaitTermination(2 * heartbeatMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        recordUnrecorded();
        if (!unrecorded.isEmpty()) {
            LOG.warn("Worker stops with {} outcomes it could not record: their rows are claimed again", unrecorded.size());
        }
        try {
            // work cut short by the stop: given back with its attempt, due again at once
            List<String> unfinished = working.values().stream().flatMap(h -> h.work().keys().stream()).toList();
            if (!unfinished.isEmpty()) {
                LOG.info("Worker stops: gave back {} inbox rows it had not finished", queue.release(self, unfinished));
            }
            liveness.leave();
        } catch (SQLException | RuntimeException e) {
            LOG.warn("Worker could not sign off (its claims are free once its heartbeat is {} ms old): {}",
                    deadAfterMillis, e.getMessage());
        }
    }

    void beat() {
        try {
            int earlier = liveness.beat();
            if (earlier > 0) {
                LOG.info("Worker instance {} took back the claims of {} earlier boot(s) of it", self.instanceId(),
                        earlier);
            }
            if (heartbeatFailing) {
                LOG.info("Worker heartbeat works again");
                heartbeatFailing = false;
            }
        } catch (SQLException | RuntimeException e) {
            if (!heartbeatFailing) {
                LOG.warn("Worker heartbeat failed (retrying every {} ms; after {} ms other instances may take this"
                        + " one's claims over): {}", heartbeatMillis, deadAfterMillis, e.getMessage());
                heartbeatFailing = true;
            }
        }
    }

    private void recordAndRenew() {
        recordUnrecorded();
        if (System.nanoTime() - nextRenewal >= 0) {
            nextRenewal = System.nanoTime() + renewalPeriod().toNanos();
            renewLeases();
        }
    }

    private Duration renewalPeriod() {
        return Duration.ofMillis(Math.max(100, leaseSeconds * 1000 / 3));
    }

    void renewLeases() {
        long now = System.nanoTime();
        List<String> keys = working.values().stream().filter(h -> h.lastRenewal() - now > 0)
                .flatMap(h -> h.work().keys().stream()).toList();
        if (keys.isEmpty()) {
            return;
        }
        try {
            int renewed = queue.renew(self, keys, Duration.ofSeconds(leaseSeconds));
            fencedIfShort(keys.size(), renewed, "lease renewal");
            if (renewalFailing) {
                LOG.info("Worker renews its leases again");
                renewalFailing = false;
            }
        } catch (SQLException | RuntimeException e) {
            // the next renewal tries again; the heartbeat keeps the claims meanwhile
            if (!renewalFailing) {
                LOG.warn("Worker cannot renew the lease of {} inbox rows (retrying): {}", keys.size(), e.getMessage());
                renewalFailing = true;
            }
        }
    }

    /** Claims the next batch; returns the accounts to reconcile (possibly none). */
    public synchronized List<AccountWork> claim() {
        beginBeating();
        giveUpOverdueWork(System.nanoTime());
        List<InboxRow> rows;
        try {
            rows = queue.claim(self, batchSize, claimMaxRows, Duration.ofSeconds(leaseSeconds),
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
                deadLetter(row, PoisonReason.of(e), e.getMessage());
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
                deadLetter(row, PoisonReason.NO_ACCOUNT, PoisonReason.NO_ACCOUNT_MESSAGE);
            } else {
                tradeRows.computeIfAbsent(account, a -> new ArrayList<>()).add(row);
                tradeEventsByAccount.computeIfAbsent(account, a -> new ArrayList<>()).add(event);
            }
        }
        if (!accountsSeen.isEmpty()) {
            settle(new Outcome(null, "accounts " + accountsSeen, List.of(
                    () -> accountReconciler.registerAccounts(accountsSeen))));
        }
        if (!settled.isEmpty()) {
            settle(new Outcome(null, settled.size() + " rows needing no reconcile", List.of(() -> {
                int n = queue.markProcessed(self, settled);
                processed.addAndGet(n);
                fencedIfShort(settled.size(), n, "rows needing no reconcile");
            })));
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

    // work held past its limit was lost (a drain cut short): no longer renewed, its rows are anyone's again, ours too
    private void giveUpOverdueWork(long now) {
        working.forEach((account, held) -> {
            if (held.giveUp() - now <= 0 && working.remove(account, held)) {
                unrecorded.removeIf(o -> account.equals(o.accountId()));
            }
        });
    }

    /** The account's reconcile committed: its rows are applied. */
    public void completed(AccountWork work) {
        String about = about(work);
        settle(new Outcome(work.accountId(), about, List.of(() -> {
            int n = queue.markProcessed(self, work.accountId(), work.keys());
            processed.addAndGet(n);
            fencedIfShort(work.rows().size(), n, about);
        })));
    }

    /**
     * The account's reconcile failed: the rows whose own attempts are spent are failed, and the account backs off,
     * with every pending row of it (claimed or not) waiting for its retry time.
     */
    public void failed(AccountWork work, Throwable cause) {
        String error = describe(cause);
        try {
            accountReconciler.recordFailure(work.accountId(), error);
        } catch (RuntimeException e) {
            // the account's last error is for the operator; the rows' outcome below is what must not be lost
            LOG.warn("Could not record the reconcile failure of account {} on it: {}", work.accountId(),
                    e.getMessage());
        }
        settle(backOff(work, cause, error));
    }

    /** "account 2, tickets [77, 78]": what a log line about this work names (never a body). */
    static String about(AccountWork work) {
        Set<Long> tickets = new java.util.TreeSet<>();
        work.hints().forEach(h -> tickets.add(h.ticket()));
        return "account " + work.accountId() + (tickets.isEmpty() ? "" : ", tickets " + tickets);
    }

    private Outcome backOff(AccountWork work, Throwable cause, String error) {
        String about = about(work);
        long decidedAt = System.nanoTime();
        if (cause instanceof MetaKitApiException api && api.unauthorized()) {
            Duration delay = Duration.ofMillis(backoffMaxMillis);
            return new Outcome(work.accountId(), about, List.of(() -> {
                InboxClaims.Backoff b = queue.backOff(self, work.accountId(), work.keys(), work.keys(), error,
                        sinceDecided(delay, decidedAt), false);
                fencedIfShort(work.rows().size(), b.claimedRows(), about);
            }));
        }
        List<InboxRow> again = new ArrayList<>();
        List<InboxRow> spent = new ArrayList<>();
        for (InboxRow row : work.rows()) {
            (retryPolicy.exhausted(row.attempts()) ? spent : again).add(row);
        }
        // the account's delay follows its longest-tried row still going (a Retry-After overrides it)
        int attempts = again.stream().mapToInt(InboxRow::attempts).max().orElse(work.attempts());
        Duration delay = retryPolicy.delay(attempts, cause);
        List<String> againKeys = again.stream().map(InboxRow::key).toList();
        List<Outcome.Step> steps = new ArrayList<>();
        // the backoff first: its check that this boot still holds the work sees the spent rows too
        steps.add(() -> {
            InboxClaims.Backoff backoff = queue.backOff(self, work.accountId(), work.keys(), againKeys, error,
                    sinceDecided(delay, decidedAt), true);
            retried.addAndGet(backoff.claimedRows());
            fencedIfShort(againKeys.size(), backoff.claimedRows(), about);
            if (backoff.retryAt() != null) {
                LOG.info("Retrying {} inbox rows in {} ms (attempt {} of {}, {}), {} more of the account's rows wait"
                                + " with them: {}", backoff.claimedRows(), delay.toMillis(), attempts, maxAttempts, about,
                        backoff.waitingRows(), error);
            }
        });
        if (!spent.isEmpty()) {
            List<String> spentKeys = spent.stream().map(InboxRow::key).toList();
            steps.add(() -> {
                int n = queue.markFailed(self, spentKeys, error);
                failed.addAndGet(n);
                fencedIfShort(spentKeys.size(), n, about);
                for (InboxRow row : spent) {
                    LOG.warn("Inbox row {} failed after {} attempts ({}): {}", row.key(), row.attempts(), about,
                            error);
                }
            });
        }
        return new Outcome(work.accountId(), about, steps);
    }

    /** A delay decided at {@code decidedAt}: what is left of it now (an outcome recorded late keeps its time). */
    private static Duration sinceDecided(Duration delay, long decidedAt) {
        Duration left = delay.minusNanos(System.nanoTime() - decidedAt);
        return left.isNegative() ? Duration.ZERO : left;
    }

    /** A row no retry can fix (its body): failed at once, with the reason. */
    private void deadLetter(InboxRow row, PoisonReason kind, String reason) {
        String error = "unusable body, not retried (" + kind.label() + "): " + reason;
        String about = row.accountId() == null ? "no account" : "account " + row.accountId();
        settle(new Outcome(null, "row " + row.key(), List.of(() -> {
            int n = queue.markFailed(self, List.of(row.key()), error);
            failed.addAndGet(n);
            deadLettered.computeIfAbsent(kind, k -> new AtomicLong()).addAndGet(n);
            fencedIfShort(1, n, about);
            if (n > 0) {
                LOG.warn("Inbox row {} dead-lettered at attempt {} ({}): {}", row.key(), row.attempts(), about, error);
            }
        })));
    }

    /** Records an outcome now, or keeps it for when the database answers; its account is held until it is recorded. */
    private void settle(Outcome outcome) {
        try {
            outcome.record();
            finished(outcome);
        } catch (SQLException | RuntimeException e) {
            unrecorded.add(outcome);
            if (!recordFailing) {
                LOG.warn("Worker cannot record outcomes now ({}: kept, recorded as soon as the database answers,"
                        + " retried every {} ms): {}", outcome.about(), heartbeatMillis, e.getMessage());
                recordFailing = true;
            }
        }
    }

    void recordUnrecorded() {
        for (Outcome o : unrecorded) {
            try {
                o.record();
            } catch (SQLException | RuntimeException e) {
                return; // still down: the next round tries again, in the same order
            }
            unrecorded.remove(o);
            finished(o);
        }
        if (recordFailing && unrecorded.isEmpty()) {
            LOG.info("Worker recorded the outcomes it kept while the database was unavailable");
            recordFailing = false;
        }
    }

    private void finished(Outcome outcome) {
        if (outcome.accountId() != null) {
            working.remove(outcome.accountId());
        }
    }

    private void fencedIfShort(int expected, int written, String about) {
        int lost = expected - written;
        if (lost > 0) {
            fenced.addAndGet(lost);
            LOG.warn("Worker boot {} no longer holds {} of {} inbox rows it claimed ({}): another instance took them"
                    + " over while this one was not beating; nothing written for them", self.bootToken(), lost,
                    expected, about);
        }
    }

    static String defaultInstanceId() {
        String host = System.getenv("HOSTNAME");
        if (host != null && !host.isBlank()) {
            return host;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
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
        int n = new InboxAdmin(dataSource).requeueFailed(null, null);
        LOG.info("Requeued {} failed inbox rows", n);
        return n;
    }

    public InboxAdmin.Backlog backlog() throws SQLException {
        return new InboxAdmin(dataSource).backlog();
    }

    public long processedCount() { return processed.get(); }
    public long retriedCount() { return retried.get(); }
    public long failedCount() { return failed.get(); }
    /** Row writes not made because another boot had taken the claim over (this one was paused or cut off). */
    public long fencedCount() { return fenced.get(); }
    /** Rows failed at their first claim because no retry can fix them, by reason. */
    public long deadLetteredCount(PoisonReason reason) {
        AtomicLong n = deadLettered.get(reason);
        return n == null ? 0 : n.get();
    }
    /** Outcomes waiting for the database. */
    public int unrecordedCount() { return unrecorded.size(); }
    /** This boot: the instance id and its token (null before start). */
    public Claimant claimant() { return self; }

    /**
     * This boot, its heartbeat running from now on (if no claim started it yet): what else the boot holds by liveness,
     * the change feed's accounts ({@code feed/FeedOwnership}), is held by this heartbeat and lost with it.
     */
    public synchronized Claimant beatingBoot() {
        if (self == null) {
            throw new IllegalStateException("the worker has not started: its boot does not beat yet");
        }
        beginBeating();
        return self;
    }

    /** How long after this boot's last heartbeat the others take over what it holds. */
    public Duration deadAfter() { return Duration.ofMillis(deadAfterMillis); }

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
    /** METAKIT_INSTANCE_ID; blank: the host name. */
    public void setInstanceId(String instanceId) { this.instanceId = instanceId; }
    public void setHeartbeatMillis(long millis) { this.heartbeatMillis = millis; }
    public void setDeadAfterMillis(long millis) { this.deadAfterMillis = millis; }
}
