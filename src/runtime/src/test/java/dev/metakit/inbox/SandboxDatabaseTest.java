package dev.metakit.inbox;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The sandbox deletes only its own data directory, and runs only on the server that keeps its data there. */
class SandboxDatabaseTest {
    @TempDir
    Path work;

    private SandboxDatabase sandbox() {
        return new SandboxDatabase(work);
    }

    @Test
    void itsOwnPostgresDataDirectoryIsDeletedAndNothingBesideIt() throws Exception {
        Path own = work.resolve("data/sandbox-postgres");
        Files.createDirectories(own.resolve("base/1"));
        Files.writeString(own.resolve("PG_VERSION"), "16\n");
        Files.writeString(own.resolve("base/1/1259"), "rows");
        Path users = work.resolve("data/postgres");
        Files.createDirectories(users);
        Files.writeString(users.resolve("PG_VERSION"), "16\n");

        sandbox().recreate();

        assertThat(own).doesNotExist();
        assertThat(users.resolve("PG_VERSION")).exists();
    }

    @Test
    void anAbsentDirectoryIsFine() {
        sandbox().recreate();
        assertThat(work.resolve("data/sandbox-postgres")).doesNotExist();
    }

    @Test
    void aLinkIsRefusedAndWhatItPointsToKept() throws Exception {
        Path users = Files.createDirectories(work.resolve("elsewhere"));
        Files.writeString(users.resolve("PG_VERSION"), "16\n");
        Files.createDirectories(work.resolve("data"));
        Files.createSymbolicLink(work.resolve("data/sandbox-postgres"), users);

        assertRecreateRefused("symbolic link", users.resolve("PG_VERSION"));
    }

    @Test
    void aDirectoryThatIsNotAPostgresDataDirectoryIsRefused() throws Exception {
        Path own = ownDirectory();
        Files.writeString(own.resolve("notes.txt"), "mine");

        assertRecreateRefused("not a PostgreSQL data directory", own.resolve("notes.txt"));
    }

    @Test
    void aDirectoryARunningServerUsesIsRefused() throws Exception {
        Path own = ownDirectory();
        Files.writeString(own.resolve("PG_VERSION"), "16\n");
        // a live process stands in for the postmaster: this JVM
        Files.writeString(own.resolve("postmaster.pid"), ProcessHandle.current().pid() + "\n" + own + "\n");

        assertRecreateRefused("in use by a running PostgreSQL", own.resolve("PG_VERSION"));
    }

    @Test
    void anyOtherDatabaseIsRefused() {
        assertThatThrownBy(() -> sandbox().verify(TestDatabase.dataSource()))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageStartingWith("sandbox mode runs only on its own embedded database in data/sandbox-postgres");
    }

    /** Recreating the sandbox's database stops with a configuration error saying why; {@code kept} is kept. */
    private void assertRecreateRefused(String why, Path kept) {
        assertThatThrownBy(() -> sandbox().recreate()).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining(why);
        assertThat(kept).exists();
    }

    /** The sandbox's own database directory, made empty. */
    private Path ownDirectory() throws IOException {
        return Files.createDirectories(work.resolve("data/sandbox-postgres"));
    }
}
