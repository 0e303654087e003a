package dev.metakit.inbox.config;

import org.apache.camel.CamelContext;
import org.apache.camel.component.properties.PropertiesComponent;
import org.apache.camel.spi.PropertiesFunction;
import org.apache.camel.spi.PropertiesSource;
import org.apache.camel.util.IOHelper;

import java.util.HashSet;
import java.util.Properties;
import java.util.Set;

/**
 * Reads a secret setting the way its placeholder ({@code {{metakit.api.key}}}) would resolve, from the same sources in
 * the same order, but through none of the calls that log what they resolve: Camel's placeholder parser logs every value
 * it finds at DEBUG ({@code DefaultPropertiesParser}, {@code DefaultCamelContextExtension}), its lookup at TRACE
 * ({@code DefaultPropertiesLookup}), and bean binding logs every property it sets at TRACE, none of them masking. So the
 * beans that hold a secret read it here instead of receiving it as a bean property in the route files.
 *
 * <p>Order, as Camel 4.18's parser: local properties, environment and system properties when they override, the
 * lookup (override properties, the properties sources: a file's, Quarkus's config, initial properties), the runtime's
 * own lookup (Spring Boot's Environment), environment and system properties as fallbacks. A value's own placeholders
 * ({@code {{env:METAKIT_API_KEY:}}}, {@code {{other.key:default}}}) resolve the same way, functions through the
 * context's properties functions.
 */
public final class SecretLookup {
    private static final String PREFIX = "{{";
    private static final String SUFFIX = "}}";
    private static final int MAX_DEPTH = 16;

    private final PropertiesComponent properties;

    private SecretLookup(PropertiesComponent properties) {
        this.properties = properties;
    }

    /** The setting's value with its placeholders resolved, or "" when it is not set anywhere. */
    public static String value(CamelContext context, String key) {
        if (context == null) {
            throw new IllegalStateException("reading " + key + " needs the CamelContext");
        }
        String value = new SecretLookup((PropertiesComponent) context.getPropertiesComponent())
                .resolvePlaceholder(key, new HashSet<>(), 0);
        return value == null ? "" : value;
    }

    private String resolveText(String text, Set<String> resolving, int depth) {
        String answer = text;
        int suffix;
        while ((suffix = answer.indexOf(SUFFIX)) >= 0) {
            int prefix = answer.lastIndexOf(PREFIX, suffix);
            if (prefix < 0) {
                throw new IllegalArgumentException("a '}}' without its '{{' in the value of a secret setting");
            }
            String inner = resolvePlaceholder(answer.substring(prefix + PREFIX.length(), suffix), resolving, depth);
            answer = answer.substring(0, prefix) + (inner == null ? "" : inner)
                    + answer.substring(suffix + SUFFIX.length());
        }
        return answer;
    }

    /** One placeholder's content: {@code key}, {@code key:default}, {@code ?key} or {@code function:remainder}. */
    private String resolvePlaceholder(String placeholder, Set<String> resolving, int depth) {
        if (depth > MAX_DEPTH || !resolving.add(placeholder)) {
            throw new IllegalArgumentException("circular placeholders in a secret setting: " + placeholder);
        }
        try {
            String content = placeholder.startsWith("?") ? placeholder.substring(1) : placeholder;
            int colon = content.indexOf(':');
            PropertiesFunction function = colon > 0 ? properties.getPropertiesFunction(content.substring(0, colon))
                    : null;
            if (function != null) {
                String remainder = content.substring(colon + 1);
                if (function.lookupFirst(remainder)) {
                    remainder = resolvePlaceholder(remainder, resolving, depth + 1);
                    if (remainder == null) {
                        return null;
                    }
                }
                String value = function.apply(remainder);
                return value == null ? null : resolveText(value, resolving, depth + 1);
            }
            String key = colon > 0 ? content.substring(0, colon) : content;
            String value = raw(key);
            if (value == null && colon > 0) {
                value = content.substring(colon + 1);
            }
            return value == null ? null : resolveText(value, resolving, depth + 1);
        } finally {
            resolving.remove(placeholder);
        }
    }

    private String raw(String key) {
        String value = get(properties.getLocalProperties(), key);
        int env = properties.getEnvironmentVariableMode();
        int sys = properties.getSystemPropertiesMode();
        if (value == null && env == PropertiesComponent.ENVIRONMENT_VARIABLES_MODE_OVERRIDE) {
            value = IOHelper.lookupEnvironmentVariable(key);
        }
        if (value == null && sys == PropertiesComponent.SYSTEM_PROPERTIES_MODE_OVERRIDE) {
            value = System.getProperty(key);
        }
        if (value == null) {
            value = get(properties.getOverrideProperties(), key);
        }
        if (value == null) {
            for (PropertiesSource source : properties.getPropertiesSources()) {
                value = source.getProperty(key);
                if (value != null) {
                    break;
                }
            }
        }
        if (value == null) {
            value = get(properties.getInitialProperties(), key);
        }
        if (value == null && properties.getPropertiesParser() != null) {
            value = properties.getPropertiesParser().customLookup(key);
        }
        if (value == null && env == PropertiesComponent.ENVIRONMENT_VARIABLES_MODE_FALLBACK) {
            value = IOHelper.lookupEnvironmentVariable(key);
        }
        if (value == null && sys == PropertiesComponent.SYSTEM_PROPERTIES_MODE_FALLBACK) {
            value = System.getProperty(key);
        }
        return value;
    }

    private static String get(Properties from, String key) {
        Object value = from == null ? null : from.get(key);
        return value == null ? null : value.toString();
    }
}
