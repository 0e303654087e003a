package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.metakit.MalformedPayloadException;
import dev.metakit.inbox.metakit.MetaKitJson;
import dev.metakit.inbox.metakit.WebhookEvent;
import dev.metakit.inbox.reconcile.Hint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a claim takes and what becomes of its rows. A claim takes whole accounts: the due rows of the accounts of the
 * next {@code batchSize} due rows, at most {@code maxRows}, leaving out the accounts this instance is still working
 * ({@link InboxClaims#claim}). Its rows are then sorted: a row that is no trade event needs no reconcile; the trade
 * events of one account are one {@link AccountWork}, so a burst of events for one account costs one reconcile; a row
 * no retry can fix (a body that cannot be read, a trade event without an account) is a dead letter.
 */
final class ClaimPolicy {
    private static final Logger LOG = LoggerFactory.getLogger(ClaimPolicy.class);

    /** A claimed row no retry can fix, why, and what is wrong with it (never a body). */
    record DeadLetter(InboxRow row, PoisonReason reason, String message) {
    }

    /**
     * A claim's rows sorted: the accounts they name (trade events or not), the rows needing no reconcile, the dead
     * letters, and the work of each account with trade events, in the order the claim returned them.
     */
    record Sorted(Set<Long> accountsSeen, List<InboxKey> noReconcile, List<DeadLetter> deadLetters,
                  List<AccountWork> work) {
    }

    private final InboxClaims claims;
    private final Claimant self;
    private final TradeEvents trade;
    private final int batchSize;
    private final int maxRows;
    private final Duration lease;
    private final MetaKitJson json = new MetaKitJson();
    private volatile boolean claimFailing;
    /** A claim failed: it may have gone through all the same (the connection broke after its commit). */
    private volatile boolean claimInDoubt;

    ClaimPolicy(InboxClaims claims, Claimant self, TradeEvents trade, int batchSize, int maxRows, Duration lease) {
        this.claims = claims;
        this.self = self;
        this.trade = trade;
        this.batchSize = batchSize;
        this.maxRows = maxRows;
        this.lease = lease;
    }

    /** The next batch, leaving out {@code busyAccounts}; none while the database cannot be claimed from. */
    List<InboxRow> claim(Set<Long> busyAccounts) {
        List<InboxRow> rows;
        try {
            rows = claims.claim(self, batchSize, maxRows, lease, busyAccounts);
        } catch (SQLException e) {
            claimInDoubt = true;
            // the poll runs every second: one line per outage, not a stack trace per poll
            if (!claimFailing) {
                LOG.warn("Worker cannot claim inbox rows (retrying every poll, quiet until it works again): {}",
                        e.getMessage());
                claimFailing = true;
            }
            return List.of();
        }
        if (claimFailing) {
            LOG.info("Worker claims inbox rows again");
            claimFailing = false;
        }
        return rows;
    }

    /**
     * After a claim that failed, gives back the rows it may have claimed all the same: a statement whose commit went
     * through but whose answer was lost (the connection broke, as when a primary dies) leaves rows claimed by this
     * boot that nobody works on, and its heartbeat would keep them for the whole lease. Every row this boot holds
     * but {@code keysInHand} is such a row, as long as no outcome is waiting for the database (the caller's to
     * check): the rows are due again at once, with their attempt back. Tried again at the next call if the database
     * still does not answer.
     */
    void giveBackWhatAFailedClaimTook(Collection<InboxKey> keysInHand) {
        if (!claimInDoubt) {
            return;
        }
        try {
            int given = claims.releaseAllBut(self, keysInHand);
            claimInDoubt = false;
            if (given > 0) {
                LOG.info("Worker gave back {} inbox rows claimed by a claim whose answer it never got (the"
                        + " connection broke after its commit): they are claimed again", given);
            }
        } catch (SQLException e) {
            LOG.debug("Worker cannot give back what a failed claim took yet (retrying at the next claim): {}",
                    e.getMessage());
        }
    }

    /**
     * Whether no retry can fix the row, as {@link #sort} finds it: a body that cannot be read, a trade event without
     * an account (a catch-up's settled rows are marked processed unread unless this says so).
     */
    boolean unusable(InboxRow row) {
        WebhookEvent event;
        try {
            event = json.webhookEvent(row.body());
        } catch (MalformedPayloadException e) {
            return true;
        }
        return trade.isTrade(eventName(row, event)) && account(row, event) == null;
    }

    /** The tickets of these rows' trade events, as hints (a row that cannot be read names none: a claim fails it). */
    List<Hint> hints(List<InboxRow> rows) {
        List<WebhookEvent> events = new ArrayList<>();
        for (InboxRow row : rows) {
            try {
                WebhookEvent event = json.webhookEvent(row.body());
                if (trade.isTrade(eventName(row, event))) {
                    events.add(event);
                }
            } catch (MalformedPayloadException e) {
                // put back by the marker of settled rows, then dead-lettered by a claim with its reason
            }
        }
        return Hint.from(events);
    }

    private static String eventName(InboxRow row, WebhookEvent event) {
        return row.event() != null ? row.event() : event.event();
    }

    private static Long account(InboxRow row, WebhookEvent event) {
        return event.accountId() != null ? event.accountId() : row.accountId();
    }

    /** Sorts claimed rows by what becomes of them: by the event name stored with the row, and the body's account. */
    Sorted sort(List<InboxRow> rows) {
        Map<Long, List<InboxRow>> tradeRows = new LinkedHashMap<>();
        Map<Long, List<WebhookEvent>> tradeEvents = new LinkedHashMap<>();
        List<InboxKey> noReconcile = new ArrayList<>();
        List<DeadLetter> deadLetters = new ArrayList<>();
        Set<Long> accountsSeen = new LinkedHashSet<>();
        for (InboxRow row : rows) {
            WebhookEvent event;
            try {
                event = json.webhookEvent(row.body());
            } catch (MalformedPayloadException e) {
                deadLetters.add(new DeadLetter(row, PoisonReason.of(e), e.getMessage()));
                continue;
            }
            String name = eventName(row, event);
            Long account = account(row, event);
            if (account != null) {
                accountsSeen.add(account);
            }
            if (!trade.isTrade(name)) {
                noReconcile.add(row.inboxKey());
            } else if (account == null) {
                deadLetters.add(new DeadLetter(row, PoisonReason.NO_ACCOUNT, PoisonReason.NO_ACCOUNT_MESSAGE));
            } else {
                tradeRows.computeIfAbsent(account, a -> new ArrayList<>()).add(row);
                tradeEvents.computeIfAbsent(account, a -> new ArrayList<>()).add(event);
            }
        }
        List<AccountWork> work = new ArrayList<>(tradeRows.size());
        tradeRows.forEach((account, list) ->
                work.add(new AccountWork(account, list, Hint.from(tradeEvents.get(account)))));
        return new Sorted(accountsSeen, noReconcile, deadLetters, work);
    }
}
