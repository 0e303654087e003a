package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.InboxKey;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The work this instance claimed and has not settled (its outcome recorded), by account: its accounts are left out of
 * the next claims, its rows' leases are renewed. Work that never ends (a drain cut short) is given up after
 * {@value #MAX_HOLD_LEASES} leases: its renewals stop two leases before, so its rows are free by then, ours too, even
 * when the last renewal's statement ran late (a renewal selected just before the stop and executed a moment after it
 * would otherwise lease a row past the give-up, and a claim then took the account's other rows without it). Times are
 * {@code System.nanoTime()} values, passed in so a test sets them.
 */
final class WorkInHand {
    static final int MAX_HOLD_LEASES = 10;

    /** Work in hand and when it is given up: renewals stop two leases before, so its rows are free by then. */
    private record Held(AccountWork work, long giveUp, long lastRenewal) {
    }

    private final long leaseNanos;
    private final Map<Long, Held> working = new ConcurrentHashMap<>();

    WorkInHand(Duration lease) {
        this.leaseNanos = lease.toNanos();
    }

    /** Holds {@code work} claimed at {@code claimedAt}: never given up before the rows' lease in the database ends. */
    void hold(AccountWork work, long claimedAt) {
        long giveUp = claimedAt + leaseNanos * MAX_HOLD_LEASES;
        working.put(work.accountId(), new Held(work, giveUp, giveUp - 2 * leaseNanos));
    }

    /** The accounts whose work is in hand (a snapshot). */
    Set<Long> accounts() {
        return Set.copyOf(working.keySet());
    }

    /** The account's work is settled. */
    void release(long accountId) {
        working.remove(accountId);
    }

    /** Gives up the work held past its limit at {@code now}; returns the accounts given up. */
    List<Long> giveUpOverdue(long now) {
        List<Long> givenUp = new ArrayList<>();
        working.forEach((account, held) -> {
            if (held.giveUp() - now <= 0 && working.remove(account, held)) {
                givenUp.add(account);
            }
        });
        return givenUp;
    }

    /** The rows whose lease is still to be renewed at {@code now}: those of work not near its limit. */
    List<InboxKey> keysToRenew(long now) {
        return working.values().stream().filter(h -> h.lastRenewal() - now > 0)
                .flatMap(h -> h.work().keys().stream()).toList();
    }

    /** Every row of the work in hand. */
    List<InboxKey> keys() {
        return working.values().stream().flatMap(h -> h.work().keys().stream()).toList();
    }
}
