package dev.metakit.inbox.reconcile;

import java.util.ArrayList;
import java.util.List;

/**
 * What one account's reconcile changed. {@code stale}: a newer snapshot had already been applied, so nothing was.
 * {@code opened} counts rows inserted as open, {@code updated} open rows whose fields changed (or that the API lists
 * open again), {@code closed} rows that became or were inserted closed, {@code closing} rows that became closing.
 */
public record ReconcileResult(long accountId, boolean stale, int opened, int updated, int closed, int closing) {

    public static ReconcileResult stale(long accountId) {
        return new ReconcileResult(accountId, true, 0, 0, 0, 0);
    }

    /** Rows written: 0 when the table already matched the API. */
    public int changes() {
        return opened + updated + closed + closing;
    }

    /**
     * What changed, for a person: "1 position opened, 2 updated", "no change", or for a stale snapshot "snapshot
     * older than the stored one: ignored". Without the account, which the log line and the ops page name already.
     */
    public String inWords() {
        if (stale) {
            return "snapshot older than the stored one: ignored";
        }
        List<String> parts = new ArrayList<>(4);
        add(parts, opened, "opened");
        add(parts, updated, "updated");
        add(parts, closed, "closed");
        add(parts, closing, "closing");
        return parts.isEmpty() ? "no change" : String.join(", ", parts);
    }

    // the first figure names what it counts ("3 positions updated"), the ones after it read on from it ("1 closed")
    private static void add(List<String> parts, int count, String what) {
        if (count > 0) {
            parts.add(parts.isEmpty() ? count + (count == 1 ? " position " : " positions ") + what : count + " " + what);
        }
    }

    /** The same words: a log line or message that prints the result reads as a sentence. */
    @Override
    public String toString() {
        return inWords();
    }
}
