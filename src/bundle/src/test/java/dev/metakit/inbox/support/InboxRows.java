package dev.metakit.inbox.support;

/** Inbox rows written straight into the test database, in a chosen state. */
public final class InboxRows {
    private InboxRows() {
    }

    /** A row of account {@code account}, received {@code hoursAgo} hours ago, in state processed/failed/pending/claimed. */
    public static void row(String key, long account, int hoursAgo, String state) {
        String processed = state.equals("processed") ? "now()" : "null";
        String failed = state.equals("failed") ? "now()" : "null";
        String claimed = state.equals("claimed") ? "now() + interval '2 minutes'" : "null";
        // signed when it was received, as MetaKit's deliveries are: an old row lies in the partition of its day
        TestDatabase.exec("insert into webhook_inbox (delivery_key, event, account_id, body, received_at, signed_at,"
                + " processed_at, failed_at, attempts, last_error, claimed_until, next_attempt_at) values ('" + key
                + "', 'position.opened', " + account + ", '{}', now() - interval '" + hoursAgo + " hours', now() -"
                + " interval '" + hoursAgo + " hours', "
                + processed + ", " + failed + ", 3, 'boom', " + claimed + ", now() + interval '1 hour')");
    }

    /** {@code count} rows as {@link #row} writes them, keyed {@code prefix0}, {@code prefix1}, ... */
    public static void rows(String prefix, int count, long account, int hoursAgo, String state) {
        for (int i = 0; i < count; i++) {
            row(prefix + i, account, hoursAgo, state);
        }
    }
}
