package dev.metakit.inbox.feed;

/** The headers every change carries to the outlet (routes/changes.camel.yaml documents them for integrators). */
public final class FeedHeaders {
    /** {@code <account>:<seq>}, stable across repeats: the downstream's dedupe key */
    public static final String CHANGE_ID = "MetaKitChangeId";
    public static final String ACCOUNT_ID = "MetaKitAccountId";
    public static final String TICKET = "MetaKitTicket";
    /** opened, modified or closed */
    public static final String CHANGE_KIND = "MetaKitChangeKind";

    private FeedHeaders() {
    }
}
