package dev.metakit.inbox.worker;

import dev.metakit.inbox.metakit.MalformedPayloadException;

/**
 * Why a row was dead-lettered: its body is one no retry can fix. The label is the {@code reason} tag of
 * {@code metakit_inbox_dead_lettered_total}.
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

    /** The reason for a body {@link dev.metakit.inbox.metakit.MetaKitJson} could not read: what its exception says. */
    static PoisonReason of(MalformedPayloadException e) {
        return switch (e.defect()) {
            case NOT_JSON -> NOT_JSON;
            case NOT_OBJECT -> NOT_OBJECT;
            case BAD_TICKET -> BAD_TICKET;
            case FIELD -> MALFORMED;
        };
    }
}
