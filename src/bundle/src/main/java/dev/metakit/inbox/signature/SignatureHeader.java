package dev.metakit.inbox.signature;

import dev.metakit.inbox.signature.SignatureVerificationException.Reason;

import java.util.ArrayList;
import java.util.List;

/**
 * The parsed {@code X-MetaKit-Signature} header: {@code t=<unix seconds>,v1=<hex>[,v1=<hex>...]}.
 *
 * <p>Grammar accepted by {@link #parse(String)} (anything else is {@link Reason#MALFORMED_HEADER}):
 * <ul>
 *   <li>at most {@value #MAX_LENGTH} characters, so the work per request is bounded;</li>
 *   <li>elements separated by {@code ,}; spaces and tabs around an element are ignored, but not around its
 *       {@code =} ({@code "t =1"} is the unknown key {@code "t "});</li>
 *   <li>an empty element (a trailing comma, {@code ",,"}) is malformed: MetaKit never sends one, and a strict
 *       grammar leaves nothing to interpret;</li>
 *   <li>every element is {@code key=value} with a non-empty key; the value runs to the next comma;</li>
 *   <li>{@code t} exactly once: ASCII digits only, at most 18 of them (no overflow), no leading zero unless it is
 *       {@code 0} itself. The signed payload is {@code "<t>."} as sent, so a canonical decimal guarantees that the
 *       parsed number prints back to the very bytes that were signed;</li>
 *   <li>{@code v1} at least once, each exactly 64 hex digits of either case, kept as sent (the delivery key is
 *       built from the matching digest, lower-case, not from this text: see {@link VerifiedSignature});</li>
 *   <li>any other key ({@code v0}, {@code v2}, ...) is ignored, whatever its value.</li>
 * </ul>
 *
 * @param timestamp the {@code t} value, unix seconds
 * @param v1        the {@code v1} values in header order, as sent
 */
public record SignatureHeader(long timestamp, List<String> v1) {

    /** Two signatures plus room for unknown schemes fit many times over; a longer header is not MetaKit's. */
    public static final int MAX_LENGTH = 8 * 1024;

    /** HMAC-SHA256 is 32 bytes. */
    public static final int V1_HEX_LENGTH = 64;

    /** 18 digits stay below {@link Long#MAX_VALUE}; unix seconds need 10 until the year 2286. */
    private static final int MAX_T_DIGITS = 18;

    public SignatureHeader {
        if (timestamp < 0) {
            throw new IllegalArgumentException("timestamp must not be negative");
        }
        v1 = List.copyOf(v1);
        if (v1.isEmpty()) {
            throw new IllegalArgumentException("at least one v1 is required");
        }
    }

    /**
     * Parses a header value. Throws nothing but {@link SignatureVerificationException}, whatever the input.
     *
     * @throws SignatureVerificationException {@link Reason#MISSING_HEADER} for a null, empty or blank header,
     *                                        {@link Reason#MALFORMED_HEADER} for anything outside the grammar
     */
    public static SignatureHeader parse(String header) throws SignatureVerificationException {
        if (header == null || header.isBlank()) {
            throw new SignatureVerificationException(Reason.MISSING_HEADER);
        }
        if (header.length() > MAX_LENGTH) {
            throw malformed("header too long");
        }
        long timestamp = -1;
        List<String> signatures = new ArrayList<>(2);
        int length = header.length();
        int start = 0;
        while (start <= length) {
            int comma = header.indexOf(',', start);
            int end = comma < 0 ? length : comma;
            int from = start;
            int to = end;
            while (from < to && isSpace(header.charAt(from))) {
                from++;
            }
            while (to > from && isSpace(header.charAt(to - 1))) {
                to--;
            }
            if (from == to) {
                throw malformed("empty element");
            }
            int equals = header.indexOf('=', from);
            if (equals < 0 || equals >= to) {
                throw malformed("element without '='");
            }
            if (equals == from) {
                throw malformed("element without key");
            }
            if (isKey(header, from, equals, "t")) {
                if (timestamp >= 0) {
                    throw malformed("duplicate t");
                }
                timestamp = parseTimestamp(header, equals + 1, to);
            } else if (isKey(header, from, equals, "v1")) {
                signatures.add(parseV1(header, equals + 1, to));
            }
            // any other key: ignored
            start = end + 1;
        }
        if (timestamp < 0) {
            throw malformed("no t");
        }
        if (signatures.isEmpty()) {
            throw malformed("no v1");
        }
        return new SignatureHeader(timestamp, signatures);
    }

    private static long parseTimestamp(String header, int from, int to) throws SignatureVerificationException {
        int digits = to - from;
        if (digits == 0) {
            throw malformed("empty t");
        }
        if (digits > MAX_T_DIGITS) {
            throw malformed("t too long");
        }
        if (digits > 1 && header.charAt(from) == '0') {
            throw malformed("t with leading zero");
        }
        long value = 0;
        for (int i = from; i < to; i++) {
            char c = header.charAt(i);
            if (c < '0' || c > '9') {
                throw malformed("t not a non-negative integer");
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }

    private static String parseV1(String header, int from, int to) throws SignatureVerificationException {
        if (to - from != V1_HEX_LENGTH) {
            throw malformed("v1 of wrong length");
        }
        for (int i = from; i < to; i++) {
            char c = header.charAt(i);
            boolean hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
            if (!hex) {
                throw malformed("v1 not hex");
            }
        }
        return header.substring(from, to);
    }

    private static boolean isKey(String header, int from, int to, String key) {
        return to - from == key.length() && header.startsWith(key, from);
    }

    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t';
    }

    private static SignatureVerificationException malformed(String detail) {
        return new SignatureVerificationException(Reason.MALFORMED_HEADER, detail);
    }
}
