package dev.metakit.inbox.worker;

import dev.metakit.inbox.config.ContextBean;
import dev.metakit.inbox.config.InstanceId;
import dev.metakit.inbox.config.Required;
import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.Heartbeat;
import dev.metakit.inbox.inbox.InboxAdmin;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.inbox.InstanceLiveness;
import dev.metakit.inbox.metakit.MetaKitApi;
import dev.metakit.inbox.reconcile.AccountReconciler;
import dev.metakit.inbox.reconcile.ReconcileResult;
import org.apache.camel.CamelExecutionException;
import org.apache.camel.ProducerTemplate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The worker, the bean {@code inboxWorker} that {@link InboxToPositionRoutes} calls: {@link #claim()} a batch of inbox rows and
 * get one {@link AccountWork} per account with trade events (what needs no reconcile is settled at once), then
 * {@link #completed} or {@link #failed} for each. Rows are marked processed only after their reconcile committed. Its
 * jobs are one class each:
 * <ul>
 * <li>{@link ClaimPolicy}: what a claim takes (whole accounts, leaving out those this instance is still working) and
 * what becomes of its rows;</li>
 * <li>{@link WorkerUpkeep}: the heartbeat and the renewal of the leases of the {@link WorkInHand}, on its own
 * threads; work that never ends (a drain cut short) is given up after {@value WorkInHand#MAX_HOLD_LEASES} leases;</li>
 * <li>{@link Outcomes} and {@link OutcomeBuffer}: processed, retried with the account backing off, failed, dead
 * letters; an outcome the database cannot take now (it is down) is kept and written as soon as it answers, the
 * account held meanwhile: no row waits for a lease while its instance lives;</li>
 * <li>{@link WorkerCounters}: what this instance wrote, for the metrics.</li>
 * </ul>
 * Claims belong to this boot ({@link Claimant}: the instance id and a token per start). When its heartbeat stops (a
 * crash, a kill, a pause), its claims are free for the others after {@code deadAfterMillis}, and at once for a restart
 * of the same instance id. Every outcome write checks the token: a boot resumed after its claims were taken over
 * writes nothing for them (counted in {@link #fencedCount()}).
 */
public class InboxWorker extends ContextBean implements Heartbeat {
    private static final Logger LOG = LoggerFactory.getLogger(InboxWorker.class);
    /** the most recent rows the catch-ups of one claim read for their tickets; accounts past it go row by row */
    static final int RECENT_ROWS = 50_000;

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

    private final WorkerCounters counters = new WorkerCounters();
    private Claimant self;
    private InboxClaims claims;
    private InstanceLiveness liveness;
    private ClaimPolicy claimPolicy;
    private WorkInHand workInHand;
    private Outcomes outcomes;
    private OutcomeBuffer outcomeBuffer;
    private WorkerUpkeep upkeep;
    /** how soon the doorbell claims again */
    private final ClaimPacing pacing = new ClaimPacing();
    private final InboxDoorbell doorbell = new InboxDoorbell();
    private ApiReturnProbe apiReturnProbe;
    private ProducerTemplate metaKitGets;

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

    /*
     * The heartbeat starts on the first claim, not here: a boot that never claims (a bundle without the worker routes)
     * has nothing to keep alive.
     */
    @Override
    protected void begin() {
        self = Claimant.newBoot(InstanceId.of(instanceId));
        claims = new InboxClaims(dataSource, Duration.ofMillis(deadAfterMillis));
        // an earlier boot of this id silent for two beats is no live sibling: its claims come back at once; a beat
        // that takes half of dead-after is dropped and tried again on a new connection
        liveness = new InstanceLiveness(dataSource, self, Duration.ofMillis(2 * heartbeatMillis),
                Duration.ofMillis(Math.max(heartbeatMillis, deadAfterMillis / 2)));
        Duration lease = Duration.ofSeconds(leaseSeconds);
        claimPolicy = new ClaimPolicy(claims, self, new TradeEvents(tradeEvents), batchSize, claimMaxRows, lease);
        RetryPolicy retryPolicy = new RetryPolicy(maxAttempts, Duration.ofMillis(backoffBaseMillis),
                Duration.ofMillis(backoffMaxMillis));
        outcomes = new Outcomes(claims, self, retryPolicy, Duration.ofMillis(backoffMaxMillis), counters);
        workInHand = new WorkInHand(lease);
        outcomeBuffer = new OutcomeBuffer(workInHand, heartbeatMillis);
        upkeep = new WorkerUpkeep(liveness, claims, workInHand, outcomeBuffer, counters, heartbeatMillis,
                deadAfterMillis, lease, row -> !claimPolicy.unusable(row));
        upkeep.onCanary(pacing::dueNow);
        apiReturnProbe = new ApiReturnProbe(this::metaKitAnswers, this::wakeBackingOff);
        if (getCamelContext() != null) { // the worker's logic alone (tests) has no MetaKit to ask
            metaKitGets = getCamelContext().createProducerTemplate();
            apiReturnProbe.start();
        }
    }

    /** The probe's question: does MetaKit answer a GET (the status watch's) with 2xx? */
    private boolean metaKitAnswers() {
        try {
            metaKitGets.requestBody(MetaKitApi.GET_ENDPOINT, new MetaKitApi().webhooksPath(), byte[].class);
            return true;
        } catch (CamelExecutionException e) {
            return false;
        }
    }

    /** MetaKit answers again: the accounts backing off on the worker's own delay are claimed at once. */
    private int wakeBackingOff() throws java.sql.SQLException {
        int woken = claims.wakeBackingOff();
        pacing.dueNow();
        try {
            doorbell.ring(getCamelContext());
        } catch (Exception e) {
            // the poll rings within its period anyway
            LOG.debug("Worker could not ring its doorbell after MetaKit's return: {}", e.getMessage());
        }
        return woken;
    }

    /**
     * Writes what can still be written, gives back the rows of work not finished, then leaves: the claims this boot
     * still has are free for others at once (if the database is still reachable; else after dead-after). The heartbeat
     * beats until then, however long the stop waited for the work in flight: the rows stay this boot's, never another
     * instance's to take over, until they are given back.
     */
    @Override
    protected synchronized void end() {
        if (apiReturnProbe != null) {
            apiReturnProbe.stop();
        }
        stopQuietly(metaKitGets);
        if (upkeep == null || !upkeep.started()) {
            return;
        }
        outcomeBuffer.recordKept();
        if (outcomeBuffer.size() > 0) {
            LOG.warn("Worker stops with {} outcomes it could not record: their rows are claimed again",
                    outcomeBuffer.size());
        }
        // no outcome is written after this: a reconcile still under way finds its rows given back
        outcomeBuffer.close(this::giveBackUnfinished);
        upkeep.stop();
        leave();
    }

    private static void stopQuietly(ProducerTemplate template) {
        if (template != null) {
            try {
                template.stop();
            } catch (RuntimeException e) {
                LOG.debug("Worker's MetaKit producer did not stop cleanly: {}", e.getMessage());
            }
        }
    }

    private void giveBackUnfinished() {
        try {
            // work cut short by the stop: given back with its attempt, due again at once
            List<InboxKey> unfinished = workInHand.keys();
            if (!unfinished.isEmpty()) {
                LOG.info("Worker stops: gave back {} inbox rows it had not finished", claims.release(self, unfinished));
            }
        } catch (SQLException | RuntimeException e) {
            LOG.warn("Worker could not give its unfinished rows back (they are free once its heartbeat is {} ms old):"
                    + " {}", deadAfterMillis, e.getMessage());
        }
    }

    private void leave() {
        try {
            liveness.leave();
        } catch (SQLException | RuntimeException e) {
            LOG.warn("Worker could not sign off (its claims are free once its heartbeat is {} ms old): {}",
                    deadAfterMillis, e.getMessage());
        }
    }

    /** Claims the next batch; returns the accounts to reconcile (possibly none, and none once stopped). */
    public synchronized List<AccountWork> claim() {
        if (outcomeBuffer.closed()) {
            return List.of(); // a drain that outlived the stop: this boot has left, it claims nothing more
        }
        upkeep.start();
        long now = System.nanoTime();
        // work held past its limit was lost (a drain cut short): its rows are anyone's again, ours too
        workInHand.giveUpOverdue(now).forEach(outcomeBuffer::forget);
        if (outcomeBuffer.size() == 0) {
            // with no outcome waiting, every row of this boot's not in hand is one that nobody works on
            claimPolicy.giveBackWhatAFailedClaimTook(workInHand.keys());
        }
        List<InboxRow> rows = claimPolicy.claim(workInHand.accounts());
        pacing.claimed(!rows.isEmpty());
        if (rows.isEmpty()) {
            return List.of();
        }
        ClaimPolicy.Sorted sorted = claimPolicy.sort(rows);
        for (ClaimPolicy.DeadLetter d : sorted.deadLetters()) {
            outcomeBuffer.settle(outcomes.deadLettered(d.row(), d.reason(), d.message()));
        }
        if (!sorted.accountsSeen().isEmpty()) {
            outcomeBuffer.settle(new Outcome(null, "accounts " + sorted.accountsSeen(), List.of(
                    () -> accountReconciler.registerAccounts(sorted.accountsSeen()))));
        }
        if (!sorted.noReconcile().isEmpty()) {
            outcomeBuffer.settle(outcomes.noReconcile(sorted.noReconcile()));
        }
        List<AccountWork> work = withRecentTickets(sorted.work());
        // counted from after the claim: never given up before the rows' lease in the database ends
        long claimedAt = System.nanoTime();
        work.forEach(w -> workInHand.hold(w, claimedAt));
        return work;
    }

    /**
     * The catch-ups ({@link AccountWork#catchUp()}) of a claim with the tickets of the rows of their accounts' last
     * moments before the claim (older rows' closes are found through the deals), read in one statement (the
     * catch-ups of one claim share its time), and the rows of them after the settle time, which each catch-up marks
     * processed with its own; a catch-up whose rows cannot all be read is an ordinary retry.
     */
    private List<AccountWork> withRecentTickets(List<AccountWork> claimed) {
        List<AccountWork> catchUps = claimed.stream().filter(w -> w.settleThrough() != null).toList();
        if (catchUps.isEmpty()) {
            return claimed;
        }
        AccountWork first = catchUps.get(0);
        InboxClaims.Recent recent;
        try {
            recent = claims.pendingBetween(catchUps.stream().map(AccountWork::accountId).toList(),
                    first.recentFrom(), first.readUpTo(), RECENT_ROWS);
        } catch (SQLException e) {
            LOG.debug("Catch-ups of {} accounts not taken: their recent rows cannot be read: {}", catchUps.size(),
                    e.getMessage());
            recent = null;
        }
        List<AccountWork> out = new ArrayList<>(claimed.size());
        for (AccountWork w : claimed) {
            if (w.settleThrough() == null) {
                out.add(w);
            } else if (recent != null && recent.complete(w.accountId())
                    && w.settleThrough().equals(first.settleThrough())) {
                // a row no retry can fix is left to a claim, which dead-letters it with its reason
                out.add(w.withRecent(claimPolicy.hints(recent.of(w.accountId())),
                        recent.after(w.accountId(), w.settleThrough()).stream()
                                .filter(r -> !claimPolicy.unusable(r)).map(InboxRow::inboxKey).toList()));
            } else {
                out.add(w.withoutCatchUp()); // its rows go row by row, claimed and read
            }
        }
        return out;
    }

    /** The account's reconcile committed: its rows are applied, a catch-up's backlog with them. */
    public void completed(AccountWork work) {
        completed(work, null);
    }

    /** The account's reconcile committed ({@code result}): its rows are applied, a catch-up's backlog with them. */
    public void completed(AccountWork work, ReconcileResult result) {
        pacing.wentThrough();
        apiReturnProbe.wentThrough();
        outcomeBuffer.settle(outcomes.completed(work, result != null && result.stale()));
        if (work.catchUp() != null) {
            upkeep.settled();
        }
    }

    /**
     * The account's reconcile failed: the rows whose own attempts are spent are failed, and the account backs off,
     * one row of state that holds every pending row of it (claimed or not) back until its retry time.
     */
    public void failed(AccountWork work, Throwable cause) {
        if (outcomeBuffer.closed()) {
            // the stop cut the reconcile short (and gave its rows back): no failure of the account's
            LOG.info("Worker stopped before the reconcile of account {} ended: its rows were given back",
                    work.accountId());
            return;
        }
        pacing.failed();
        apiReturnProbe.failed(cause);
        String error = Outcomes.describe(cause);
        try {
            accountReconciler.recordFailure(work.accountId(), error);
        } catch (RuntimeException e) {
            // the account's last error is for the operator; the rows' outcome below is what must not be lost
            LOG.warn("Could not record the reconcile failure of account {} on it: {}", work.accountId(),
                    e.getMessage());
        }
        outcomeBuffer.settle(outcomes.failed(work, cause, error));
    }

    /**
     * How long the doorbell waits before its next claim ({@link ClaimPacing}): {@code coalesceMillis}, or longer, up
     * to {@code pollMillis}, while claims find nothing during an API outage.
     */
    long ringDelayMillis(long coalesceMillis, long pollMillis) {
        return pacing.delayMillis(coalesceMillis, pollMillis);
    }

    /**
     * Waits {@link #ringDelayMillis} in the doorbell's thread before its claim; MetaKit's return or an account the
     * canary made due cut a longer wait under way to {@code coalesceMillis}.
     */
    public void awaitNextClaim(long coalesceMillis, long pollMillis) {
        pacing.awaitNextClaim(coalesceMillis, pollMillis);
    }

    /** Renews the leases of the work in hand now (the upkeep does it every third of a lease). */
    void renewLeases() {
        upkeep.renewLeases();
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

    public long processedCount() { return counters.processed(); }
    public long retriedCount() { return counters.retried(); }
    public long failedCount() { return counters.failed(); }
    /** Row writes not made because another boot had taken the claim over (this one was paused or cut off). */
    public long fencedCount() { return counters.fenced(); }
    /** Rows failed at their first claim because no retry can fix them, by reason. */
    public long deadLetteredCount(PoisonReason reason) { return counters.deadLettered(reason); }
    /** Outcomes waiting for the database. */
    public int unrecordedCount() { return outcomeBuffer == null ? 0 : outcomeBuffer.size(); }
    /** This boot: the instance id and its token (null before start). */
    public Claimant claimant() { return self; }

    /**
     * This boot, its heartbeat running from now on (if no claim started it yet): what else the boot holds by liveness,
     * the change feed's accounts, is held by this heartbeat and lost with it.
     */
    @Override
    public synchronized Claimant beatingBoot() {
        if (self == null) {
            throw new IllegalStateException("the worker has not started: its boot does not beat yet");
        }
        upkeep.start();
        return self;
    }

    @Override
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
