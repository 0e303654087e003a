package dev.metakit.inbox.support;

import dev.metakit.inbox.sandbox.WebhookSender;

import java.util.List;

/**
 * Signs deliveries with the sandbox's sender, the one signer of the project (the verifier under test has its own
 * code, so tests never compute their expected values with it).
 */
public final class TestSignatures {
    private TestSignatures() {
    }

    /** hex(HMAC-SHA256(secret, "&lt;t&gt;." + body)) */
    public static String v1(String secret, long t, byte[] body) {
        return WebhookSender.sign(secret, t, body);
    }

    /** {@code t=<t>,v1=<hex>} for one secret. */
    public static String header(String secret, long t, byte[] body) {
        return WebhookSender.signatureHeader(t, List.of(v1(secret, t, body)));
    }

    /** {@code t=<t>,v1=<hex1>,v1=<hex2>}: what MetaKit sends during a rotation. */
    public static String header(String secret, String secondSecret, long t, byte[] body) {
        return WebhookSender.signatureHeader(t, List.of(v1(secret, t, body), v1(secondSecret, t, body)));
    }

    /** Now in epoch seconds: the {@code t} of a delivery signed now. */
    public static long now() {
        return System.currentTimeMillis() / 1000;
    }
}
