package dev.metakit.inbox.config;

import org.apache.camel.CamelContext;
import org.apache.camel.ExtendedCamelContext;
import org.apache.camel.util.SensitiveUtils;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Tells Camel which of the bundle's settings hold secrets, so that whatever Camel prints of them (camel-main's
 * property-placeholders summary at INFO, on Quarkus and wherever a host runs camel-main) shows {@code xxxxxx}. Camel
 * masks a key by its last word ({@code metakit.webhook.secret}: "secret"); {@code metakit.api.key} ("key") and
 * {@code metakit.webhook.secret-previous} ("secretprevious") are not words it knows, so the bundle adds them to the
 * context's additional sensitive keywords, after any the host has set: it only ever masks more. Camel masks nothing
 * at DEBUG and TRACE, so the beans read these settings themselves ({@link #read}) rather than as placeholders.
 */
public class SecretSettings extends ContextAwareBean {
    public static final String WEBHOOK_SECRET = "metakit.webhook.secret";
    public static final String WEBHOOK_SECRET_PREVIOUS = "metakit.webhook.secret-previous";
    public static final String WEBHOOK_SECRET_KEY = "metakit.webhook.secret-key";
    public static final String API_KEY = "metakit.api.key";
    public static final String DATABASE_PASSWORD = "metakit.database.password";
    public static final String OPS_TOKEN = "metakit.ops.token";

    /** every setting of the bundle that holds a secret */
    public static final List<String> KEYS = List.of(WEBHOOK_SECRET, WEBHOOK_SECRET_PREVIOUS, WEBHOOK_SECRET_KEY, API_KEY,
            DATABASE_PASSWORD, OPS_TOKEN);

    /**
     * A secret for a bean: the value it was given (a test's, a host's own wiring), else the setting read through
     * {@link SecretLookup} (never as a placeholder in a route file: Camel logs a placeholder's value at DEBUG), else
     * null without a CamelContext.
     */
    public static String read(CamelContext context, String key, String given) {
        if (given != null || context == null) {
            return given;
        }
        return SecretLookup.value(context, key);
    }

    /** The initMethod: adds the last words Camel does not already mask (once, however often it is called). */
    public void register() {
        ExtendedCamelContext ecc = getCamelContext().getCamelContextExtension();
        Set<String> keywords = new LinkedHashSet<>();
        String hosts = ecc.getAdditionalSensitiveKeywords();
        if (hosts != null) {
            for (String word : hosts.split(",")) {
                if (!word.isBlank()) {
                    keywords.add(word.trim());
                }
            }
        }
        for (String key : KEYS) {
            if (!SensitiveUtils.containsSensitive(key)) {
                keywords.add(lastWord(key));
            }
        }
        ecc.setAdditionalSensitiveKeywords(String.join(",", keywords));
    }

    /** the word Camel compares: after the last dot, lower case, without dashes */
    static String lastWord(String key) {
        return key.substring(key.lastIndexOf('.') + 1).toLowerCase(Locale.ENGLISH).replace("-", "");
    }
}
