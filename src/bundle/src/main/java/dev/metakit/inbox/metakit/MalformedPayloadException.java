package dev.metakit.inbox.metakit;

/**
 * A MetaKit body (webhook or REST response) that cannot be used. The message is a short reason naming the field
 * and never quotes the body, so it is safe to store as {@code last_error} and to log. {@link #defect()} and
 * {@link #field()} say the same for code, which must not have to read the message.
 */
public class MalformedPayloadException extends RuntimeException {

    /** What is wrong with the body as a whole, or that one of its fields is. */
    public enum Defect {
        /** empty, unreadable, or not JSON at all */
        NOT_JSON,
        /** JSON, but a webhook body that is not an object */
        NOT_OBJECT,
        /**
         * a webhook's {@code data.ticket}, the position the delivery is about, is not a usable number: the one field
         * whose defect the worker tells apart (a dead letter's reason)
         */
        BAD_TICKET,
        /** another field (or an element of a list) is missing or of the wrong type: {@link #field()} names it */
        FIELD
    }

    private final Defect defect;
    private final String field;

    private MalformedPayloadException(Defect defect, String field, String message) {
        super(message);
        this.defect = defect;
        this.field = field;
    }

    static MalformedPayloadException notJson(String message) {
        return new MalformedPayloadException(Defect.NOT_JSON, null, message);
    }

    static MalformedPayloadException notObject(String message) {
        return new MalformedPayloadException(Defect.NOT_OBJECT, null, message);
    }

    /** The field by its path in the body ({@code data.ticket}, {@code positions[0]}), and what is wrong with it. */
    static MalformedPayloadException badField(String field, String problem) {
        return new MalformedPayloadException(Defect.FIELD, field, field + ": " + problem);
    }

    /** The same field and message, with {@link Defect#BAD_TICKET}: {@code field} was a webhook's ticket. */
    static MalformedPayloadException badTicket(MalformedPayloadException field) {
        return new MalformedPayloadException(Defect.BAD_TICKET, field.field, field.getMessage());
    }

    public Defect defect() {
        return defect;
    }

    /** The path of the field at fault ({@link Defect#FIELD}, {@link Defect#BAD_TICKET}), or null for the whole body. */
    public String field() {
        return field;
    }
}
