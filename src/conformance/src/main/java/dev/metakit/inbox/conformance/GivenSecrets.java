package dev.metakit.inbox.conformance;

import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxSettings;

import java.io.IOException;
import java.net.URI;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;

/**
 * The secrets a runtime under test is given, each one distinctive (random), so that finding it in a log can only mean
 * the log holds it.
 */
public record GivenSecrets(String webhookSecret, String previousSecret, String apiKey, String databasePassword,
                           String opsToken) {

    public static GivenSecrets random() {
        return new GivenSecrets("whsec_" + hex(), "whsec_previous_" + hex(), "mk_api_" + hex(), "pg_" + hex(),
                "ops_" + hex());
    }

    public List<String> all() {
        return List.of(webhookSecret, previousSecret, apiKey, databasePassword, opsToken);
    }

    /**
     * The MetaKit the runtime reconciles against: the sandbox's REST API with this API key, signing with this secret.
     * Its own traffic never starts (the checks send their own deliveries).
     */
    public Sandbox metakit(URI webhook) throws IOException {
        return new Sandbox(SandboxSettings.builder().webhookUrl(webhook).webhookSecret(webhookSecret).apiKey(apiKey)
                .accounts(1).faults(SandboxFaults.none()).operations(1).apiPort(0).build());
    }

    private static String hex() {
        byte[] bytes = new byte[12];
        new SecureRandom().nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
