package dev.metakit.inbox.feed;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.LongPredicate;

/**
 * Which accounts get a turn, and when. An offered account is queued for a turn unless it has one queued or running
 * (then it gets another turn after that one, unless the turn's first read already answered the offer) or may not
 * take one now (backing off, or the publisher stopping). Up to {@code concurrency} rounds run at once; each takes the
 * accounts queued when it starts, up to {@link #MAX_ACCOUNTS_PER_ROUND}, and publishes them together
 * ({@link FeedRound}). So a change committed while every round is busy waits for the first round to end, not for a
 * turn of every account queued before its own: at a trickle a round is one account a moment after its change
 * committed, and under load rounds grow, and with them what each statement and each wait for the outlet is shared by.
 * An account with changes left after its turn is queued again, behind the accounts offered meanwhile.
 */
final class AccountTurns {
    /** The most accounts one round takes: the rest wait for the next round, so that the rounds share the work. */
    static final int MAX_ACCOUNTS_PER_ROUND = 64;

    /** accounts with a turn queued or running, and whether they are offered again meanwhile */
    private final Map<Long, Boolean> turns = new ConcurrentHashMap<>();
    private final Queue<Long> queued = new ConcurrentLinkedQueue<>();
    private final AtomicInteger rounds = new AtomicInteger();
    private final int concurrency;
    private final Executor pool;
    private final LongPredicate mayTakeTurn;
    private volatile Function<List<Long>, Set<Long>> round;

    /**
     * @param pool        runs the rounds (at most {@code concurrency} at once)
     * @param mayTakeTurn whether an account may have a turn now (false: backing off, or stopping)
     */
    AccountTurns(int concurrency, Executor pool, LongPredicate mayTakeTurn) {
        this.concurrency = concurrency;
        this.pool = pool;
        this.mayTakeTurn = mayTakeTurn;
    }

    /** What a round does: publishes the accounts, returns those with changes left. Set before the first offer. */
    void rounds(Function<List<Long>, Set<Long>> publish) {
        this.round = publish;
    }

    /** Gives the account a turn, or another one after the turn it has. */
    void offer(long account) {
        if (!mayTakeTurn.test(account)) {
            return;
        }
        boolean[] fresh = {false};
        turns.compute(account, (a, again) -> {
            fresh[0] = again == null;
            return again != null;
        });
        if (fresh[0]) {
            queue(account);
        }
    }

    /** Whether accounts wait for a round now (every round busy, or one about to take them). */
    boolean othersQueued() {
        return !queued.isEmpty();
    }

    /** The account's turn reads its changes now: the offers made of it so far are answered by that read. */
    void reading(long account) {
        turns.replace(account, true, false);
    }

    private void queue(long account) {
        queued.add(account);
        if (joinRounds()) {
            try {
                pool.execute(this::runRounds);
            } catch (RejectedExecutionException stopping) {
                rounds.decrementAndGet();
            }
        }
    }

    /** Counts one more round running, unless {@code concurrency} run already (one of them takes what is queued). */
    private boolean joinRounds() {
        for (int n = rounds.get(); n < concurrency; n = rounds.get()) {
            if (rounds.compareAndSet(n, n + 1)) {
                return true;
            }
        }
        return false;
    }

    private void runRounds() {
        while (true) {
            List<Long> accounts = take();
            if (accounts.isEmpty()) {
                rounds.decrementAndGet();
                // an account queued after the take above may have found every round busy: take it up unless another
                // round is left to
                if (queued.isEmpty() || !joinRounds()) {
                    return;
                }
                continue;
            }
            Set<Long> more = Set.of();
            try {
                more = round.apply(accounts);
            } finally {
                for (long account : accounts) {
                    ended(account, more.contains(account));
                }
            }
        }
    }

    private List<Long> take() {
        List<Long> accounts = new ArrayList<>();
        for (Long a; accounts.size() < MAX_ACCOUNTS_PER_ROUND && (a = queued.poll()) != null; ) {
            accounts.add(a);
        }
        return accounts;
    }

    /** The account's turn ended: another one if it has changes left or was offered meanwhile (and may take one). */
    private void ended(long account, boolean more) {
        Boolean again = turns.compute(account, (a, offered) ->
                (more || Boolean.TRUE.equals(offered)) && mayTakeTurn.test(a) ? false : null);
        if (again != null) {
            queue(account); // behind the accounts offered meanwhile
        }
    }
}
