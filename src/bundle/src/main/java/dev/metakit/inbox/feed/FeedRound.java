package dev.metakit.inbox.feed;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/**
 * One round of the publisher: the turns of a set of accounts ({@link AccountTurns} says which), taken together so that
 * they share the round's statements and its wait for the outlet. At a steady trickle each account has a change or two
 * when its turn comes, and a turn of its own per change cost a read, a send waited for and a mark per change; a round
 * costs them once for all its accounts.
 *
 * <p>For each account it is what a turn of its own would be. The account's lease ({@link FeedOwnership}: skipped
 * when another live instance owns it); then in batches of up to {@code batchSize}: the lease confirmed, the unpublished
 * changes read in seq order, sent without waiting between sends ({@link OutletBatch}, each send only while the lease
 * is valid by this process's clock), and the confirmed prefix marked published, fenced by the ownership's epoch (one
 * statement for every account of the batch). A failure ends the account's turn at its first change not confirmed,
 * which is where its next turn starts again (later changes the outlet took meanwhile go again with the same id), so a
 * change is never skipped nor overtaken; the account backs off ({@link FeedBackoff}: forgiven by the next success).
 * The other accounts of the round go on.
 *
 * <p>A round ends after {@link #BATCHES_PER_TURN} steps, or after any step once other accounts wait for a round (every
 * round busy): its accounts with changes left queue again behind them, so an account offered meanwhile (taken over from
 * a frozen instance, or a change on a quiet account while others drain a backlog) waits for one step, not for the end
 * of the others' backlogs.
 *
 * @param reading      told of each account just before its changes are first read in the round (the offers made of
 *                     it until then are answered by that read)
 * @param offer        offers an account again (its retry after a failure)
 * @param othersQueued whether accounts wait for a round now
 */
record FeedRound(DataSource dataSource, FeedParts parts, FeedCounts counts, int batchSize, BooleanSupplier running,
                 LongConsumer reading, LongConsumer offer, BooleanSupplier othersQueued) {
    private static final Logger LOG = LoggerFactory.getLogger(FeedRound.class);
    /** batches of an account in one round: then the account waits behind the accounts offered meanwhile */
    private static final int BATCHES_PER_TURN = 20;

    /** Publishes the accounts' unpublished changes. Returns the accounts with changes left after the round. */
    Set<Long> publish(List<Long> accounts) {
        try (Connection c = dataSource.getConnection()) {
            Map<Long, FeedOwnership.Lease> leases = new LinkedHashMap<>();
            for (long account : accounts) {
                FeedOwnership.Lease lease = parts.ownership().lease(c, account);
                if (lease != null) {
                    leases.put(account, lease); // the account stays this boot's after the round, until a clean stop
                }
            }
            return publishBatches(c, leases);
        } catch (SQLException e) {
            accounts.forEach(a -> failed(a, "database: " + e.getMessage())); // counted: the changes wait all the same
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            accounts.forEach(a -> failed(a, String.valueOf(e.getMessage())));
        }
        return Set.of();
    }

    private Set<Long> publishBatches(Connection c, Map<Long, FeedOwnership.Lease> leases)
            throws SQLException, InterruptedException {
        // the accounts still in the round, each with the seq its next batch starts after
        Map<Long, Long> next = new LinkedHashMap<>();
        leases.keySet().forEach(a -> next.put(a, 0L));
        for (int n = 0; n < BATCHES_PER_TURN && !next.isEmpty(); n++) {
            if (!running.getAsBoolean()) {
                return Set.of(); // the outlet route stops with the context: what is left goes out after the restart
            }
            if (n > 0 && othersQueued.getAsBoolean()) {
                break; // the accounts with changes left queue again, behind those waiting
            }
            confirmLeases(c, leases, next.keySet());
            if (n == 0) {
                // offers made so far are answered by this read of every unpublished change (replayed ones too): a
                // change is announced only once committed, so it is visible here; only offers after it ask for
                // another turn (without this, each change of a steady trickle cost an empty turn)
                next.keySet().forEach(reading::accept);
            }
            Map<Long, List<FeedChange>> batches = ChangeStore.unpublished(c, next, batchSize);
            next.keySet().retainAll(batches.keySet());
            if (batches.isEmpty()) {
                break;
            }
            // each send only while its lease is valid by this process's clock: a freeze in the middle of a batch sends
            // nothing more once it woke up past the lease (the fenced mark refuses what went before)
            Map<Long, OutletBatch.Result> sent = parts.outlet().send(batches,
                    a -> running.getAsBoolean() && parts.ownership().valid(leases.get(a)), running);
            Map<Long, Integer> marked = mark(c, batches, sent, leases);
            batches.forEach((account, batch) -> {
                if (!goesOn(account, batch, sent.get(account), marked.getOrDefault(account, 0), leases.get(account),
                        next)) {
                    next.remove(account);
                }
            });
        }
        return next.keySet();
    }

    /** By this process's clock: one that stood still past a lease confirms the account in the database first. */
    private void confirmLeases(Connection c, Map<Long, FeedOwnership.Lease> leases, Set<Long> accounts)
            throws SQLException {
        for (Iterator<Long> it = accounts.iterator(); it.hasNext(); ) {
            long account = it.next();
            FeedOwnership.Lease lease = parts.ownership().stillOwns(c, leases.get(account));
            if (lease == null) {
                LOG.info("Feed: account {} is no longer this instance's to publish (its lease ran out while it stood"
                        + " still or could not beat, and the account changed hands or waits for its next heartbeat);"
                        + " nothing more sent for it here", account);
                it.remove();
            } else {
                leases.put(account, lease);
            }
        }
    }

    /** Marks every account's confirmed prefix published, in one statement. Returns how many it marked per account. */
    private Map<Long, Integer> mark(Connection c, Map<Long, List<FeedChange>> batches,
                                    Map<Long, OutletBatch.Result> sent, Map<Long, FeedOwnership.Lease> leases)
            throws SQLException {
        List<FeedChange> marked = new ArrayList<>();
        List<FeedOwnership.Lease> under = new ArrayList<>();
        batches.forEach((account, batch) -> {
            List<FeedChange> taken = batch.subList(0, sent.get(account).confirmed());
            if (!taken.isEmpty()) {
                counts.sent(taken);
                marked.addAll(taken);
                under.add(leases.get(account));
            }
        });
        return marked.isEmpty() ? Map.of() : parts.ownership().markPublished(c, under, marked);
    }

    /** What the batch's outcome means for the account: whether it goes on in this round (and after which seq). */
    private boolean goesOn(long account, List<FeedChange> batch, OutletBatch.Result sent, int marked,
                           FeedOwnership.Lease lease, Map<Long, Long> next) {
        int confirmed = sent.confirmed();
        if (confirmed > 0) {
            counts.published.addAndGet(marked);
            int failed = parts.backoff().failures(account);
            if (parts.backoff().succeeded(account) && failed > 1) {
                LOG.info("Feed: account {} publishes again after {} failures in a row", account, failed);
            }
            if (marked < confirmed) {
                counts.fenced.addAndGet(confirmed - marked);
                parts.ownership().forget(account);
                LOG.warn("Feed: account {} is no longer this instance's to publish ({} of {} marked): taken over"
                        + " meanwhile (this instance stood still), its new owner sends the rest again with the same"
                        + " ids", account, marked, confirmed);
                return false;
            }
            next.put(account, batch.get(confirmed - 1).seq());
        }
        if (confirmed < batch.size()) {
            if (sent.error() == null && running.getAsBoolean()
                    && (sent.stepEnded() || !parts.ownership().valid(lease))) {
                // the step ended (the next one sends the rest), or the lease ran out mid-batch (the next step's check
                // confirms it or ends the turn)
                return true;
            }
            if (sent.error() != null) {
                failed(account, "the outlet did not take change " + batch.get(confirmed).id() + ": "
                        + sent.error().getMessage());
            }
            return false;
        }
        return batch.size() == batchSize;
    }

    private void failed(long account, String why) {
        counts.failures.incrementAndGet();
        FeedBackoff.Backoff b = parts.backoff().failed(account);
        long delay = b.delayMillis(System.nanoTime());
        try {
            parts.retries().schedule(() -> offer.accept(account), delay, TimeUnit.MILLISECONDS);
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
}
