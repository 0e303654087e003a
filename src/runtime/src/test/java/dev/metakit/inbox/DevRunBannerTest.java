package dev.metakit.inbox;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The dev run's banner names the database the run really uses, and never its credentials. */
class DevRunBannerTest {
    private static final String URL = "http://localhost:8080/hooks/metakit";

    @Test
    void withoutADatabaseUrlItIsTheEmbeddedOneInItsDirectory() {
        String text = DevRunBanner.text("s3cret", URL, DevRunBanner.Database.of("", "", "data/postgres"));
        assertThat(text).contains("Database         : embedded PostgreSQL, data in data/postgres",
                "set METAKIT_WEBHOOK_SECRET (and DATABASE_URL for a PostgreSQL of yours)");
    }

    @Test
    void withADatabaseUrlItIsThatServerWithoutItsPassword() {
        String text = DevRunBanner.text("s3cret", URL,
                DevRunBanner.Database.of("", "postgres://inbox:pa55word@db.example:5432/inbox", "data/postgres"));
        assertThat(text).contains("Database         : PostgreSQL at jdbc:postgresql://db.example:5432/inbox")
                .doesNotContain("pa55word", "embedded", "data/postgres", "and DATABASE_URL");

        String jdbc = DevRunBanner.text("s3cret", URL, DevRunBanner.Database.of("",
                "jdbc:postgresql://db.example/inbox?user=inbox&password=pa55word", "data/postgres"));
        assertThat(jdbc).contains("PostgreSQL at jdbc:postgresql://db.example/inbox?user=inbox&password=***")
                .doesNotContain("pa55word");
    }

    @Test
    void aHostsDataSourceIsNamedByItsBean() {
        assertThat(DevRunBanner.text("s3cret", URL, DevRunBanner.Database.of("dataSource", "", "data/postgres")))
                .contains("Database         : the host's DataSource 'dataSource'");
    }
}
