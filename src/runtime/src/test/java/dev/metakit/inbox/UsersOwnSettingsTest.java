package dev.metakit.inbox;

import dev.metakit.inbox.support.ShippedProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** Sandbox mode exists only when none of the user's own settings is configured, wherever it is configured. */
class UsersOwnSettingsTest {
    private static final Function<String, String> NO_ENV = name -> null;

    @TempDir
    Path dir;

    /** The effective values of the project's own application.properties, as Camel resolves them. */
    private Function<String, Optional<String>> shippedProperties() {
        return shippedProperties(NO_ENV);
    }

    private Function<String, Optional<String>> shippedProperties(Function<String, String> env) {
        return ShippedProperties.resolver(ShippedProperties.file(), env);
    }

    private static Function<String, Optional<String>> propertiesFrom(Path file, Function<String, String> env) {
        return ShippedProperties.resolver(file, env);
    }

    @Test
    void theShippedPropertiesWithAnEmptyEnvironmentConfigureNothing() throws Exception {
        assertThat(UsersOwnSettings.configured(shippedProperties(), NO_ENV)).isEmpty();
    }

    @Test
    void eachSettingEditedIntoThePropertiesFileCountsAndIsNamedWithoutItsValue() throws Exception {
        // appended keys win over the shipped ones, as an edit of the value would
        String shipped = Files.readString(ShippedProperties.file());
        Path edited = dir.resolve("application.properties");
        Files.writeString(edited, shipped
                + "\nmetakit.database.url = postgres://app:topsecretpw@db.example:5432/inbox\n"
                + "metakit.api.url = https://mirror.example/api\n"
                + "metakit.api.key = key-from-the-file\n"
                + "metakit.webhook.secret = whsec_from_the_file\n");

        assertThat(UsersOwnSettings.configured(propertiesFrom(edited, NO_ENV), NO_ENV)).containsExactly(
                "metakit.database.url (a properties file or -Dmetakit.database.url)",
                "metakit.api.url (a properties file or -Dmetakit.api.url)",
                "metakit.api.key (a properties file or -Dmetakit.api.key)",
                "metakit.webhook.secret (a properties file or -Dmetakit.webhook.secret)")
                .noneMatch(line -> line.contains("topsecretpw") || line.contains("whsec_from_the_file"));
    }

    @Test
    void theDocumentedAndTheDerivedEnvironmentNamesCount() throws Exception {
        Map<String, String> documented = Map.of("DATABASE_URL", "jdbc:postgresql://h/db");
        assertThat(UsersOwnSettings.configured(shippedProperties(documented::get), documented::get))
                .containsExactly("metakit.database.url (DATABASE_URL)");
        assertThat(UsersOwnSettings.configured(shippedProperties(),
                Map.of("METAKIT_DATABASE_URL", "jdbc:postgresql://h/db")::get))
                .containsExactly("metakit.database.url (METAKIT_DATABASE_URL)");
        Map<String, String> secret = Map.of("METAKIT_WEBHOOK_SECRET", "s");
        assertThat(UsersOwnSettings.configured(shippedProperties(secret::get), secret::get))
                .containsExactly("metakit.webhook.secret (METAKIT_WEBHOOK_SECRET)");
    }

    @Test
    void theApiUrlCountsWhenItDiffersFromThePublicDefaultOrIsSetInTheEnvironment() throws Exception {
        Map<String, String> publicApi = Map.of("METAKIT_API_URL", "https://api.metakit.dev");
        assertThat(UsersOwnSettings.configured(shippedProperties(publicApi::get), publicApi::get))
                .containsExactly("metakit.api.url (METAKIT_API_URL)");
        assertThat(UsersOwnSettings.configured(key -> key.equals("metakit.api.url")
                ? Optional.of("http://127.0.0.1:8090") : Optional.of(""), NO_ENV))
                .containsExactly("metakit.api.url (a properties file or -Dmetakit.api.url)");
    }

    @Test
    void blankValuesConfigureNothing() {
        assertThat(UsersOwnSettings.configured(key -> Optional.of("  "), Map.of("DATABASE_URL", " ")::get)).isEmpty();
    }
}
