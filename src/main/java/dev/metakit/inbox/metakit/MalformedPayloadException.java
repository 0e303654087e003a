package dev.metakit.inbox.metakit;

/**
 * A MetaKit body (webhook or REST response) that cannot be used. The message is a short reason naming the field
 * and never quotes the body, so it is safe to store as {@code last_error} and to log.
 */
public class MalformedPayloadException extends RuntimeException {

    public MalformedPayloadException(String reason) {
        super(reason);
    }
}
