package dev.metakit.example.boot;

import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxSettings;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.springframework.test.context.DynamicPropertyRegistry;

import java.io.IOException;
import java.io.UncheckedIOException;

/** What the host's tests start besides the host: an embedded PostgreSQL as its database, the sandbox as MetaKit. */
final class TestParts {

    private TestParts() {
    }

    /** An embedded PostgreSQL of the test class's own. */
    static EmbeddedPostgres postgres() {
        try {
            return EmbeddedPostgres.builder().start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Sandbox sandbox(SandboxSettings settings) {
        try {
            return new Sandbox(settings);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The host's DataSource: {@code postgres}'s database {@code postgres}, as the user {@code postgres}. */
    static void hostDataSource(DynamicPropertyRegistry registry, EmbeddedPostgres postgres) {
        registry.add("spring.datasource.url", () -> postgres.getJdbcUrl("postgres", "postgres"));
        registry.add("spring.datasource.username", () -> "postgres");
    }
}
