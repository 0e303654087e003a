package dev.metakit.inbox.feed;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** The backstop's look at the accounts with unpublished changes, going round so that none waits on the cap. */
final class DueAccounts {
    private long after = Long.MIN_VALUE; // the next look starts after this account (guarded by this)

    /** Up to {@code max} accounts, going round from where the last look stopped. */
    synchronized List<Long> next(Connection c, int max) throws SQLException {
        List<Long> due = new ArrayList<>(ChangeStore.accountsWithUnpublished(c, after, max));
        if (due.size() < max && after != Long.MIN_VALUE) {
            for (long a : ChangeStore.accountsWithUnpublished(c, Long.MIN_VALUE, max - due.size())) {
                if (a > after) {
                    break;
                }
                due.add(a);
            }
        }
        after = due.size() == max ? due.get(due.size() - 1) : Long.MIN_VALUE;
        return due;
    }
}
