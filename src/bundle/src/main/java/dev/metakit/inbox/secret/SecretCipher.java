package dev.metakit.inbox.secret;

import dev.metakit.inbox.config.ConfigurationException;

import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;

/**
 * Encrypts the stored webhook secrets: AES-256-GCM from the JDK, a random 96-bit nonce per write, the ciphertext
 * bound (associated data) to what it is (webhook, generation, current or previous), so that a value copied into another
 * row does not decrypt. The key is {@code METAKIT_WEBHOOK_SECRET_KEY}, 32 bytes in base64; its {@link #keyId()} (a
 * fingerprint) is stored beside every ciphertext so that a wrong key gets an error naming the setting rather than a
 * bare "tag mismatch". No message here ever holds a key or a secret.
 */
public final class SecretCipher {
    /** The setting's environment name: the one thing every error of this class names. */
    public static final String KEY_SETTING = "METAKIT_WEBHOOK_SECRET_KEY";
    private static final int KEY_BYTES = 32;
    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SecretKeySpec key;
    private final String keyId;

    private SecretCipher(byte[] key) {
        this.key = new SecretKeySpec(key, "AES");
        this.keyId = fingerprint(key);
        Arrays.fill(key, (byte) 0);
    }

    /**
     * @param base64Key the setting's value
     * @throws ConfigurationException naming the setting when it is unset or not 32 bytes of base64
     */
    public static SecretCipher fromSetting(String base64Key) {
        if (base64Key == null || base64Key.isBlank()) {
            throw new ConfigurationException(KEY_SETTING + " is required to store or read a rotated webhook secret:"
                    + " 32 random bytes in base64 (openssl rand -base64 32), the same on every instance");
        }
        byte[] key;
        try {
            key = Base64.getDecoder().decode(base64Key.trim());
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(KEY_SETTING + " is not base64: set 32 random bytes in base64"
                    + " (openssl rand -base64 32)");
        }
        if (key.length != KEY_BYTES) {
            throw new ConfigurationException(KEY_SETTING + " must be " + KEY_BYTES + " bytes in base64, it is "
                    + key.length + " bytes (openssl rand -base64 32)");
        }
        return new SecretCipher(key);
    }

    /** A fingerprint of the key (not the key, nor enough to find it): what the rows record as their key id. */
    public String keyId() {
        return keyId;
    }

    /** {@code nonce || ciphertext+tag}, with a fresh random nonce. */
    public byte[] encrypt(String secret, String context) {
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        try {
            Cipher cipher = cipher(Cipher.ENCRYPT_MODE, nonce, context);
            byte[] sealed = cipher.doFinal(secret.getBytes(StandardCharsets.UTF_8));
            return ByteBuffer.allocate(NONCE_BYTES + sealed.length).put(nonce).put(sealed).array();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not available in this JVM", e);
        }
    }

    /**
     * @param storedKeyId the key id recorded with the ciphertext
     * @throws WrongSecretKeyException when the value was encrypted under another key, or does not authenticate
     */
    public String decrypt(byte[] stored, String storedKeyId, String context) {
        if (!keyId.equals(storedKeyId)) {
            throw new WrongSecretKeyException(KEY_SETTING + " is not the key the stored webhook secret was encrypted"
                    + " with (stored under key id " + storedKeyId + ", this key's id is " + keyId + "): set the"
                    + " same " + KEY_SETTING + " on every instance");
        }
        if (stored == null || stored.length <= NONCE_BYTES) {
            throw new WrongSecretKeyException("the stored webhook secret is damaged (too short to decrypt)");
        }
        try {
            Cipher cipher = cipher(Cipher.DECRYPT_MODE, Arrays.copyOf(stored, NONCE_BYTES), context);
            byte[] plain = cipher.doFinal(stored, NONCE_BYTES, stored.length - NONCE_BYTES);
            return new String(plain, StandardCharsets.UTF_8);
        } catch (AEADBadTagException e) {
            throw new WrongSecretKeyException("the stored webhook secret does not decrypt with " + KEY_SETTING
                    + " although the key id matches: the row was altered or copied from another webhook");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not available in this JVM", e);
        }
    }

    private Cipher cipher(int mode, byte[] nonce, String context) throws GeneralSecurityException {
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(mode, key, new GCMParameterSpec(TAG_BITS, nonce));
        cipher.updateAAD(context.getBytes(StandardCharsets.UTF_8));
        return cipher;
    }

    private static String fingerprint(byte[] key) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update("metakit-inbox webhook secret key id:".getBytes(StandardCharsets.UTF_8));
            return "k-" + HexFormat.of().formatHex(sha.digest(key), 0, 6);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is not available in this JVM", e);
        }
    }

    /** The stored secret cannot be read with this key: a configuration error, named in the message. */
    public static final class WrongSecretKeyException extends ConfigurationException {
        public WrongSecretKeyException(String message) {
            super(message);
        }
    }
}
