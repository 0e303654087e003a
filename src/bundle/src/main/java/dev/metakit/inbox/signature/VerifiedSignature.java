package dev.metakit.inbox.signature;

/**
 * A delivery whose signature verified.
 *
 * @param timestamp the header's {@code t}, in unix seconds
 * @param v1        the HMAC that matched an accepted secret, as lower-case hex: the same for every byte form of the
 *                  header that verifies one delivery (the header grammar accepts either hex case, so the {@code v1}
 *                  as sent is not a stable identity)
 */
public record VerifiedSignature(long timestamp, String v1) {

    /**
     * {@code <t>:<v1>}: the same for every retry of one event (MetaKit stamps {@code t} once and serialises the
     * body once) and for every letter case a sender gives its {@code v1}, so it serves as the delivery's dedupe key.
     */
    public String deliveryKey() {
        return timestamp + ":" + v1;
    }
}
