package dev.metakit.inbox.support;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;

/**
 * Signs deliveries the way MetaKit does, written straight from the contract with the JDK's own HMAC so tests never
 * compute their expected values with the code under test.
 */
public final class TestSignatures {
    private TestSignatures() {
    }

    /** hex(HMAC-SHA256(secret, "&lt;t&gt;." + body)) */
    public static String v1(String secret, long t, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            mac.update((t + ".").getBytes(StandardCharsets.US_ASCII));
            return HexFormat.of().formatHex(mac.doFinal(body));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code t=<t>,v1=<hex>} for one secret. */
    public static String header(String secret, long t, byte[] body) {
        return "t=" + t + ",v1=" + v1(secret, t, body);
    }

    /** {@code t=<t>,v1=<hex1>,v1=<hex2>}: what MetaKit sends during a rotation. */
    public static String header(String secret, String secondSecret, long t, byte[] body) {
        return header(secret, t, body) + ",v1=" + v1(secondSecret, t, body);
    }
}
