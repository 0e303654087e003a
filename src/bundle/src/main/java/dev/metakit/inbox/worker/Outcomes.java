package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.metakit.MalformedPayloadException;
import dev.metakit.inbox.metakit.MetaKitApiException;
import dev.metakit.inbox.trace.LogContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * What becomes of claimed rows, as the {@link Outcome}s that write it: processed; after a failed reconcile, the
 * account backing off, one row of state that holds every pending row of it back ({@link InboxClaims#backOff}), a row
 * failed once its own attempts are spent; a row no retry can fix (its body) failed at once, a dead letter. Every write counts what it wrote and
 * what it could not, because another boot had taken the rows over ({@link WorkerCounters}). Deciding writes nothing:
 * the {@link OutcomeBuffer} records the outcome, now or once the database answers, with the delay it decided.
 */
final class Outcomes {
    private static final Logger LOG = LoggerFactory.getLogger(Outcomes.class);

    private final InboxClaims claims;
    private final Claimant self;
    private final RetryPolicy retryPolicy;
    private final Duration unauthorizedDelay;
    private final WorkerCounters counters;

    /** {@code unauthorizedDelay}: how long an account waits after MetaKit refused our API key (the longest delay). */
    Outcomes(InboxClaims claims, Claimant self, RetryPolicy retryPolicy, Duration unauthorizedDelay,
             WorkerCounters counters) {
        this.claims = claims;
        this.self = self;
        this.retryPolicy = retryPolicy;
        this.unauthorizedDelay = unauthorizedDelay;
        this.counters = counters;
    }

    /** Rows that need no reconcile (not trade events): applied as they are. */
    Outcome noReconcile(List<InboxKey> keys) {
        return new Outcome(null, keys.size() + " rows needing no reconcile", List.of(() -> {
            int n = claims.markProcessed(self, keys);
            counters.addProcessed(n);
            counters.fencedIfShort(self, keys, n, "rows needing no reconcile", claims);
        }));
    }

    /**
     * The account's reconcile committed: its rows are applied; a catch-up's ({@link AccountWork#catchUp()}) settles
     * the account's backlog with them, and the rows it read along, unless its snapshot came too late to apply
     * ({@code stale}: a later one had, which did not read the backlog's deals).
     */
    Outcome completed(AccountWork work, boolean stale) {
        String about = work.about();
        Instant settleThrough = stale ? null : work.settleThrough();
        List<InboxKey> readAlong = stale ? List.of() : work.readAlong();
        return new Outcome(work.accountId(), about, List.of(() -> {
            InboxClaims.Applied applied = claims.markProcessed(self, work.accountId(), work.keys(), settleThrough,
                    readAlong);
            counters.addProcessed(applied.held() + applied.readAlong());
            counters.fencedIfShort(self, work.keys(), applied.held(), about, claims);
        }));
    }

    /**
     * The account's reconcile failed with {@code cause} ({@code error}: its {@link #describe} line): the rows whose own
     * attempts are spent are failed, and the account backs off: every pending row of it (claimed or not) waits for its
     * retry time. A refused API key is our misconfiguration: the account waits the longest delay and the
     * rows get their attempt back.
     */
    Outcome failed(AccountWork work, Throwable cause, String error) {
        String about = work.about();
        long decidedAt = System.nanoTime();
        if (cause instanceof MetaKitApiException api && api.unauthorized()) {
            return new Outcome(work.accountId(), about, List.of(() -> {
                InboxClaims.Backoff b = claims.backOff(self, work.accountId(), work.keys(), work.keys(), error,
                        sinceDecided(unauthorizedDelay, decidedAt), false);
                counters.fencedIfShort(self, work.keys(), b.claimedRows(), about, claims);
            }));
        }
        List<InboxRow> again = new ArrayList<>();
        List<InboxRow> spent = new ArrayList<>();
        for (InboxRow row : work.rows()) {
            (retryPolicy.exhausted(row.attempts()) ? spent : again).add(row);
        }
        // the account's delay follows its failure streak, or its longest-tried row still going if that is longer
        // (a Retry-After overrides both): a retry claims one row, so the streak, not that row, says how long the
        // account has been failing
        int attempts = again.stream().mapToInt(InboxRow::attempts).max().orElse(work.attempts());
        Duration delay = retryPolicy.delay(Math.max(attempts, work.accountFailures() + 1), cause);
        boolean asked = retryPolicy.asked(cause).isPresent();
        List<InboxKey> againKeys = again.stream().map(InboxRow::inboxKey).toList();
        List<Outcome.Step> steps = new ArrayList<>();
        // the backoff first: its check that this boot still holds the work sees the spent rows too
        steps.add(() -> {
            InboxClaims.Backoff backoff = claims.backOff(self, work.accountId(), work.keys(), againKeys, error,
                    sinceDecided(delay, decidedAt), asked, true);
            counters.addRetried(backoff.claimedRows());
            counters.fencedIfShort(self, againKeys, backoff.claimedRows(), about, claims);
            if (backoff.retryAt() != null) {
                LOG.info("Retrying {} inbox rows in {} ms (attempt {} of {}, {}, its reconcile failed {} times in a"
                                + " row; its other pending rows wait with them): {}", backoff.claimedRows(),
                        delay.toMillis(), attempts, retryPolicy.maxAttempts(), about, backoff.failures(), error);
            }
        });
        if (!spent.isEmpty()) {
            List<InboxKey> spentKeys = spent.stream().map(InboxRow::inboxKey).toList();
            steps.add(() -> {
                int n = claims.markFailed(self, spentKeys, error);
                counters.addFailed(n);
                counters.fencedIfShort(self, spentKeys, n, about, claims);
                // one line for the account, not one per row: a long outage fails thousands of rows at once
                if (spent.size() == 1) {
                    LOG.warn("Inbox row {} failed after {} attempts ({}): {}", spent.get(0).key(),
                            spent.get(0).attempts(), about, error);
                } else {
                    LOG.warn("{} inbox rows failed after {} attempts or more ({}): {}; keys {}", spent.size(),
                            retryPolicy.maxAttempts(), about, error, someOf(spent));
                }
            });
        }
        return new Outcome(work.accountId(), about, steps);
    }

    /** The first few keys, and how many more: every failed row keeps {@code failed_at} and {@code last_error}. */
    private static String someOf(List<InboxRow> rows) {
        List<String> keys = rows.stream().map(InboxRow::key).toList();
        int shown = Math.min(3, keys.size());
        String first = String.join(", ", keys.subList(0, shown));
        return keys.size() > shown ? first + " and " + (keys.size() - shown) + " more" : first;
    }

    /** A row no retry can fix (its body): failed at once, with the reason. */
    Outcome deadLettered(InboxRow row, PoisonReason reason, String message) {
        String error = "unusable body, not retried (" + reason.label() + "): " + message;
        String about = row.accountId() == null ? "no account" : "account " + row.accountId();
        return new Outcome(null, "row " + row.key(), List.of(() -> {
            int n = claims.markFailed(self, List.of(row.inboxKey()), error);
            counters.addFailed(n);
            counters.addDeadLettered(reason, n);
            counters.fencedIfShort(self, List.of(row.inboxKey()), n, about, claims);
            if (n > 0) {
                try (LogContext delivery = LogContext.ofDelivery(row.key(), row.accountId(), row.traceParent())) {
                    LOG.warn("Inbox row {} dead-lettered at attempt {} ({}): {}", row.key(), row.attempts(), about,
                            error);
                }
            }
        }));
    }

    /** A failure as the rows' {@code last_error} and the log say it: MetaKit's own line, else the root cause's. */
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

    /** A delay decided at {@code decidedAt}: what is left of it now (an outcome recorded late keeps its time). */
    private static Duration sinceDecided(Duration delay, long decidedAt) {
        Duration left = delay.minusNanos(System.nanoTime() - decidedAt);
        return left.isNegative() ? Duration.ZERO : left;
    }
}
