package dev.metakit.inbox.worker;

/**
 * Why a row was dead-lettered: its body is one no retry can fix. The label is the {@code reason} tag of
 * {@code metakit_inbox_dead_lettered_total}. Told from {@link dev.metakit.inbox.metakit.MalformedPayloadException}'s
 * message, which names the field that broke.
 */
public enum PoisonReason {
    NOT_JSON("not_json"),
    NOT_OBJECT("not_object"),
    NO_ACCOUNT("no_account"),
    BAD_TICKET("bad_ticket"),
    MALFORMED("malformed");

    static final String NO_ACCOUNT_MESSAGE = "trade event without account_id";

    private final String label;

    PoisonReason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    static PoisonReason of(String message) {
        String m = message == null ? "" : message;
        if (m.startsWith("not valid JSON") || m.equals("empty body") || m.equals("unreadable body")) {
            return NOT_JSON;
        }
        if (m.equals("webhook body is not a JSON object")) {
            return NOT_OBJECT;
        }
        if (m.equals(NO_ACCOUNT_MESSAGE)) {
            return NO_ACCOUNT;
        }
        if (m.startsWith("data.ticket")) {
            return BAD_TICKET;
        }
        return MALFORMED;
    }
}
