package dev.metakit.inbox.signature;

/**
 * A delivery whose signature verified.
 *
 * @param timestamp the header's {@code t}, in unix seconds
 * @param v1        the first {@code v1} of the header that matched an accepted secret, exactly as sent (hex case
 *                  included), so the key is identical for every byte-identical retry of the event
 */
public record VerifiedSignature(long timestamp, String v1) {

    /**
     * {@code <t>:<v1>}: the same for every retry of one event (MetaKit stamps {@code t} once and serialises the
     * body once), so it serves as the delivery's dedupe key.
     */
    public String deliveryKey() {
        return timestamp + ":" + v1;
    }
}
