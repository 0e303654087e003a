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
    /** the one field of a webhook body the worker names on its own: the position a delivery is about */
    private static final String TICKET_FIELD = "data.ticket";

    private final String label;

    PoisonReason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** The reason for a body {@link dev.metakit.inbox.metakit.MetaKitJson} could not read, from what it found. */
    static PoisonReason of(MalformedPayloadException e) {
        return switch (e.defect()) {
            case NOT_JSON -> NOT_JSON;
            case NOT_OBJECT -> NOT_OBJECT;
            case FIELD -> TICKET_FIELD.equals(e.field()) ? BAD_TICKET : MALFORMED;
        };
    }
}
