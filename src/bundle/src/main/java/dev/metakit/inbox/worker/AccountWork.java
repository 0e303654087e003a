package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.reconcile.AccountReconcile;
import dev.metakit.inbox.reconcile.Hint;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** The claimed trade-event rows of one account: they ring for one reconcile, whatever their number. */
public record AccountWork(long accountId, List<InboxRow> rows, List<Hint> hints) {

    public List<InboxKey> keys() {
        return rows.stream().map(InboxRow::inboxKey).toList();
    }

    /**
     * What rings for this reconcile, the {@code source} of the changes it finds: {@code replay} when every row is one
     * an operator replayed (a live delivery among them makes it {@code event}).
     */
    public String trigger() {
        return !rows.isEmpty() && rows.stream().allMatch(InboxRow::replayed) ? "replay" : "event";
    }

    /** The reconcile these rows ring for: their tickets are its hints, {@link #trigger()} what started it. */
    public AccountReconcile reconcile() {
        return AccountReconcile.forDeliveries(accountId, hints, trigger());
    }

    /** The most attempts any of these rows has had (each row is failed on its own attempts). */
    public int attempts() {
        return rows.stream().mapToInt(InboxRow::attempts).max().orElse(0);
    }

    /** How many reconciles of the account had failed in a row when its rows were claimed (0: none). */
    public int accountFailures() {
        return rows.stream().mapToInt(InboxRow::accountFailures).max().orElse(0);
    }

    /** "account 2, tickets [77, 78]": what a log line about this work names (never a body). */
    public String about() {
        Set<Long> tickets = new TreeSet<>();
        hints.forEach(h -> tickets.add(h.ticket()));
        return "account " + accountId + (tickets.isEmpty() ? "" : ", tickets " + tickets);
    }
}
