package dev.metakit.inbox.reconcile;

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
}
