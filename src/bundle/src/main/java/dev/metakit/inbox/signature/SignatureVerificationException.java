package dev.metakit.inbox.signature;

import java.util.Locale;

/**
 * Why a delivery's signature was not accepted. The message is the reason's public text, optionally followed by a
 * fixed, non-secret detail ("duplicate t"); it never carries a secret, the body or the header as sent (the header is
 * attacker-controlled and would otherwise end up verbatim in logs).
 *
 * <p>No stack trace is filled: rejections are an expected, frequent outcome (forged or replayed deliveries, fuzzing)
 * and the place they are thrown from is always the same.
 */
public final class SignatureVerificationException extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * A rejection reason: a short public text (responses, logs) and a metric tag (a low-cardinality label), which is
     * the constant's name in lower case.
     */
    public enum Reason {
        MISSING_HEADER("missing signature header"),
        MALFORMED_HEADER("malformed signature header"),
        TIMESTAMP_OUTSIDE_TOLERANCE("timestamp outside tolerance"),
        SIGNATURE_MISMATCH("signature mismatch"),
        /** a request carrying X-MetaKit-Signature or X-MetaKit-Event more than once: which one counts is ambiguous */
        REPEATED_HEADER("repeated signature or event header");

        private final String text;

        Reason(String text) {
            this.text = text;
        }

        public String text() {
            return text;
        }

        public String metricTag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Reason reason;

    public SignatureVerificationException(Reason reason) {
        this(reason, null);
    }

    /** @param detail a fixed, non-secret explanation such as "duplicate t"; never a value taken from the request */
    public SignatureVerificationException(Reason reason, String detail) {
        super(message(reason, detail), null, false, false);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }

    private static String message(Reason reason, String detail) {
        if (reason == null) {
            throw new IllegalArgumentException("reason is required");
        }
        return detail == null || detail.isEmpty() ? reason.text() : reason.text() + ": " + detail;
    }
}
