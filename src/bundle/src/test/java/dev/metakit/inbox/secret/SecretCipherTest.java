package dev.metakit.inbox.secret;

import dev.metakit.inbox.config.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SecretCipherTest {
    static final String SECRET = "whsec_cipher_test_secret_0123456789";

    static String newKey() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return Base64.getEncoder().encodeToString(key);
    }

    @Test
    void aSecretDecryptsWithTheSameKeyAndContextAndEveryWriteHasItsOwnNonce() {
        SecretCipher cipher = SecretCipher.fromSetting(newKey());
        byte[] first = cipher.encrypt(SECRET, "wh_1/2/current");
        byte[] second = cipher.encrypt(SECRET, "wh_1/2/current");

        assertThat(first).isNotEqualTo(second);
        assertThat(new String(first, StandardCharsets.ISO_8859_1)).doesNotContain(SECRET);
        assertThat(cipher.decrypt(first, cipher.keyId(), "wh_1/2/current")).isEqualTo(SECRET);
        assertThat(cipher.decrypt(second, cipher.keyId(), "wh_1/2/current")).isEqualTo(SECRET);
    }

    @Test
    void aWrongKeyIsAnErrorNamingTheSettingAndNeitherKeyNorSecret() {
        String key = newKey();
        String otherKey = newKey();
        SecretCipher writer = SecretCipher.fromSetting(key);
        byte[] sealed = writer.encrypt(SECRET, "wh_1/1/current");
        SecretCipher reader = SecretCipher.fromSetting(otherKey);

        assertThatThrownBy(() -> reader.decrypt(sealed, writer.keyId(), "wh_1/1/current"))
                .isInstanceOf(SecretCipher.WrongSecretKeyException.class)
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("METAKIT_WEBHOOK_SECRET_KEY is not the key")
                .hasMessageContaining(writer.keyId()).hasMessageContaining(reader.keyId())
                .message().doesNotContain(key, otherKey, SECRET);
    }

    @Test
    void aCiphertextMovedToAnotherRowOrAlteredDoesNotDecrypt() {
        SecretCipher cipher = SecretCipher.fromSetting(newKey());
        byte[] sealed = cipher.encrypt(SECRET, "wh_1/1/current");

        assertThatThrownBy(() -> cipher.decrypt(sealed, cipher.keyId(), "wh_1/2/current"))
                .isInstanceOf(SecretCipher.WrongSecretKeyException.class).hasMessageContaining("altered or copied");
        sealed[sealed.length - 1] ^= 1;
        assertThatThrownBy(() -> cipher.decrypt(sealed, cipher.keyId(), "wh_1/1/current"))
                .isInstanceOf(SecretCipher.WrongSecretKeyException.class);
    }

    @Test
    void aMissingShortOrNonBase64KeyIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> SecretCipher.fromSetting("")).isInstanceOf(ConfigurationException.class)
                .hasMessageStartingWith("METAKIT_WEBHOOK_SECRET_KEY is required");
        String shortKey = Base64.getEncoder().encodeToString(new byte[16]);
        assertThatThrownBy(() -> SecretCipher.fromSetting(shortKey)).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("METAKIT_WEBHOOK_SECRET_KEY must be 32 bytes").message().doesNotContain(shortKey);
        assertThatThrownBy(() -> SecretCipher.fromSetting("not base64 at all!"))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("METAKIT_WEBHOOK_SECRET_KEY is not base64")
                .message().doesNotContain("not base64 at all!");
    }

    @Test
    void theKeyIdIsTheSameForTheSameKeyAndNotTheKey() {
        String key = newKey();
        assertThat(SecretCipher.fromSetting(key).keyId()).isEqualTo(SecretCipher.fromSetting(key).keyId())
                .isNotEqualTo(SecretCipher.fromSetting(newKey()).keyId()).doesNotContain(key);
    }
}
