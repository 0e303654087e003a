package dev.metakit.inbox.db;

import dev.metakit.inbox.config.ConfigurationException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DatabaseSettingsTest {

    @Test
    void aBlankUrlMeansTheEmbeddedDatabase() {
        assertThat(DatabaseSettings.parse("", null, null).embedded()).isTrue();
        assertThat(DatabaseSettings.parse(null, null, null).embedded()).isTrue();
    }

    @Test
    void theJdbcFormIsTakenAsItIsWithTheGivenCredentials() {
        DatabaseSettings s = DatabaseSettings.parse("jdbc:postgresql://db:5433/inbox?sslmode=require", "app", "pw");
        assertThat(s.jdbcUrl()).isEqualTo("jdbc:postgresql://db:5433/inbox?sslmode=require");
        assertThat(s.user()).isEqualTo("app");
        assertThat(s.password()).isEqualTo("pw");
    }

    @Test
    void thePostgresUrlFormBecomesJdbcWithTheCredentialsFromTheUrlDecoded() {
        DatabaseSettings s = DatabaseSettings.parse("postgres://app:p%40ss%3Aword@db.example:6543/inbox?sslmode=require",
                null, null);
        assertThat(s.jdbcUrl()).isEqualTo("jdbc:postgresql://db.example:6543/inbox?sslmode=require");
        assertThat(s.user()).isEqualTo("app");
        assertThat(s.password()).isEqualTo("p@ss:word");
        assertThat(DatabaseSettings.parse("postgresql://app@db/inbox", null, null).jdbcUrl())
                .isEqualTo("jdbc:postgresql://db/inbox");
    }

    @Test
    void explicitCredentialsWinOverThoseInTheUrl() {
        DatabaseSettings s = DatabaseSettings.parse("postgres://app:urlpw@db:5432/inbox", "other", "explicit");
        assertThat(s.user()).isEqualTo("other");
        assertThat(s.password()).isEqualTo("explicit");
    }

    @Test
    void anUnusableUrlIsRejectedWithAReasonThatNeverShowsThePassword() {
        assertThatThrownBy(() -> DatabaseSettings.parse("mysql://app:secretpw@db/inbox", null, null))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("DATABASE_URL").hasMessageNotContaining("secretpw");
        assertThatThrownBy(() -> DatabaseSettings.parse("postgres://app:secretpw@db", null, null))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("names no database").hasMessageNotContaining("secretpw");
        assertThat(DatabaseSettings.parse("postgres://app:secretpw@db/inbox", null, null).toString())
                .doesNotContain("secretpw");
    }
}
