package dev.metakit.inbox.signature;

import dev.metakit.inbox.signature.SignatureVerificationException.Reason;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * Verifies {@code X-MetaKit-Signature} against the raw body: {@code v1 = hex(HMAC-SHA256(secret, "<t>." + body))}.
 *
 * <p>Checks, in this order: the header parses ({@link SignatureHeader#parse}), {@code t} is within the tolerance of
 * the clock in either direction, and some {@code v1} matches some accepted secret. A delivery is genuine if any
 * {@code v1} matches any secret, which is how both secrets are accepted during a rotation.
 *
 * <p>Freshness is compared in whole seconds, as {@code t} is: {@code |floor(now) - t| <= tolerance}, the bound
 * included and the tolerance's sub-second part ignored.
 *
 * <p>Thread-safe. Keys are built once; each thread keeps its own initialised {@link Mac} per secret.
 */
public final class SignatureVerifier {
    private static final String ALGORITHM = "HmacSHA256";
    private static final HexFormat HEX = HexFormat.of();

    private final SecretKeySpec[] keys;
    private final long toleranceSeconds;
    private final Clock clock;
    private final ThreadLocal<Mac[]> macs;

    /**
     * @param secrets   the accepted secrets, current first, then previous; null and blank entries are ignored
     * @param tolerance how far {@code t} may lie from now, in the past or in the future
     * @param clock     the time source (fixed in tests)
     * @throws IllegalArgumentException if no usable secret remains or the tolerance is negative
     */
    public SignatureVerifier(List<String> secrets, Duration tolerance, Clock clock) {
        Objects.requireNonNull(tolerance, "tolerance");
        Objects.requireNonNull(clock, "clock");
        if (tolerance.isNegative()) {
            throw new IllegalArgumentException("tolerance must not be negative");
        }
        List<SecretKeySpec> usable = new ArrayList<>(2);
        if (secrets != null) {
            for (String secret : secrets) {
                if (secret != null && !secret.isBlank()) {
                    usable.add(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), ALGORITHM));
                }
            }
        }
        if (usable.isEmpty()) {
            // the message names the rule, never the values it was given
            throw new IllegalArgumentException("at least one non-blank webhook secret is required");
        }
        this.keys = usable.toArray(new SecretKeySpec[0]);
        this.toleranceSeconds = tolerance.getSeconds();
        this.clock = clock;
        this.macs = ThreadLocal.withInitial(this::newMacs);
        newMacs(); // fail now, not on the first request, if the JDK cannot do HmacSHA256 with these keys
    }

    /**
     * @param header  the {@code X-MetaKit-Signature} value as received (may be null)
     * @param rawBody the request body exactly as received, before any decoding
     * @return the timestamp and, as lower-case hex, the first {@code v1} of the header that verified
     * @throws SignatureVerificationException with the first failing check's {@link Reason}
     */
    public VerifiedSignature verify(String header, byte[] rawBody) throws SignatureVerificationException {
        Objects.requireNonNull(rawBody, "rawBody");
        SignatureHeader parsed = SignatureHeader.parse(header);
        long t = parsed.timestamp();
        long now = Math.floorDiv(clock.millis(), 1000L);
        // both are non-negative (t has at most 18 digits), so the difference cannot overflow
        if (Math.abs(now - t) > toleranceSeconds) {
            throw new SignatureVerificationException(Reason.TIMESTAMP_OUTSIDE_TOLERANCE);
        }

        byte[] prefix = signedPrefix(t);
        Mac[] threadMacs = macs.get();
        byte[][] expected = new byte[threadMacs.length][];
        for (int i = 0; i < threadMacs.length; i++) {
            Mac mac = threadMacs[i];
            mac.update(prefix);
            expected[i] = mac.doFinal(rawBody); // doFinal resets the Mac for the next use
        }
        for (String v1 : parsed.v1()) {
            byte[] candidate = HEX.parseHex(v1); // the header grammar guarantees 64 hex digits
            for (byte[] digest : expected) {
                if (MessageDigest.isEqual(digest, candidate)) {
                    // keyed on the digest, not on the text as sent: "AB12.." and "ab12.." are one delivery
                    return new VerifiedSignature(t, HEX.formatHex(digest));
                }
            }
        }
        throw new SignatureVerificationException(Reason.SIGNATURE_MISMATCH);
    }

    /** {@code "<t>."} in ASCII, written without an intermediate String. */
    private static byte[] signedPrefix(long t) {
        int digits = 1;
        for (long rest = t / 10; rest > 0; rest /= 10) {
            digits++;
        }
        byte[] prefix = new byte[digits + 1];
        prefix[digits] = '.';
        long rest = t;
        for (int i = digits - 1; i >= 0; i--) {
            prefix[i] = (byte) ('0' + (rest % 10));
            rest /= 10;
        }
        return prefix;
    }

    private Mac[] newMacs() {
        Mac[] result = new Mac[keys.length];
        try {
            for (int i = 0; i < keys.length; i++) {
                result[i] = Mac.getInstance(ALGORITHM);
                result[i].init(keys[i]);
            }
        } catch (GeneralSecurityException e) {
            // the cause names the algorithm or key type, not the key material
            throw new IllegalStateException("cannot initialise " + ALGORITHM, e);
        }
        return result;
    }
}
