package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.reconcile.AccountReconcile;
import dev.metakit.inbox.reconcile.Hint;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The claimed trade-event rows of one account: they ring for one reconcile, whatever their number. A catch-up's
 * ({@link #catchUp()}) also carries the rows it read along, unclaimed ({@link #readAlong()}): its account's rows
 * between its settle time and its claim, whose tickets it took.
 */
public record AccountWork(long accountId, List<InboxRow> rows, List<Hint> hints, List<InboxKey> readAlong) {

    public AccountWork(long accountId, List<InboxRow> rows, List<Hint> hints) {
        this(accountId, rows, hints, List.of());
    }

    /**
     * A catch-up settles the account's rows stored (or last tried) this long before its claim and earlier: every such
     * row has committed by then (the ingest's insert is cancelled at its commit deadline, 2 s by default). A row left
     * out is claimed and read as usual.
     */
    public static final Duration SETTLE_MARGIN = Duration.ofSeconds(3);
    /**
     * The rows of the last moments before that are read for their tickets all the same ({@link #recentFrom()}):
     * MetaKit's deals may lag a close by a moment, and a close a delivery names that no deal shows yet is kept
     * ({@code closing}) only from its delivery's ticket. So are the rows after it up to the claim that the read finds
     * (committed by then), which the committed reconcile marks processed with its own ({@link #readAlong()}): the
     * backlog stored before the claim is one reconcile, not one and then a claim of its last seconds.
     */
    static final Duration READ_BACK = Duration.ofSeconds(10);

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

    /**
     * The reconcile these rows ring for: their tickets are its hints, {@link #trigger()} what started it; for a
     * {@link #catchUp()}, one that reads the account's deals over the backlog's window too.
     */
    public AccountReconcile reconcile() {
        InboxRow.Backlog backlog = catchUp();
        return backlog == null ? AccountReconcile.forDeliveries(accountId, hints, trigger())
                : AccountReconcile.catchUp(accountId, hints, trigger(), backlog.pendingFrom());
    }

    /**
     * The backlog this work settles whole, or null: the account's retry probe with rows of the account pending
     * behind it, whose committed reconcile settles every one of them stored before {@link #settleThrough()}. Not when
     * pending rows may begin in the first partition (no time bounds the deals they can name): those go row by row.
     */
    public InboxRow.Backlog catchUp() {
        return rows.stream().map(InboxRow::backlog).filter(Objects::nonNull)
                .filter(b -> b.pendingFrom() != null).findFirst().orElse(null);
    }

    /** Up to when a committed {@link #catchUp()} settles the account's pending rows; null: no catch-up. */
    public Instant settleThrough() {
        InboxRow.Backlog backlog = catchUp();
        return backlog == null ? null : backlog.claimedAt().minus(SETTLE_MARGIN);
    }

    /** From when a {@link #catchUp()} reads the tickets of the rows it settles ({@link #withRecent}); null: none. */
    public Instant recentFrom() {
        InboxRow.Backlog backlog = catchUp();
        return backlog == null ? null : backlog.claimedAt().minus(READ_BACK);
    }

    /**
     * Up to when a {@link #catchUp()} reads its account's rows: its claim's time. Those after {@link #settleThrough()}
     * it read are its {@link #readAlong()}.
     */
    public Instant readUpTo() {
        InboxRow.Backlog backlog = catchUp();
        return backlog == null ? null : backlog.claimedAt();
    }

    /**
     * This work with {@code more} hints (a catch-up's recent rows' tickets) and {@code along}, the rows of them it
     * answers for besides its claimed ones (those after its settle time), less any it claimed.
     */
    public AccountWork withRecent(List<Hint> more, List<InboxKey> along) {
        List<Hint> all = new java.util.ArrayList<>(hints);
        all.addAll(more);
        List<InboxKey> claimed = keys();
        return new AccountWork(accountId, rows, all, along.stream().filter(k -> !claimed.contains(k)).toList());
    }

    /** This work as an ordinary retry: its rows' tickets, no backlog settled, nothing read along. */
    public AccountWork withoutCatchUp() {
        return new AccountWork(accountId, rows.stream().map(InboxRow::withoutBacklog).toList(), hints);
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
