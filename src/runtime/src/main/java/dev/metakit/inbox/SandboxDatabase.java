package dev.metakit.inbox;

import dev.metakit.inbox.config.ConfigurationException;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The sandbox's own embedded PostgreSQL, in {@code data/sandbox-postgres} under the working directory. The sandbox
 * world is new every run, so its data directory is deleted before the embedded server starts and initdb makes a new
 * one: no list of tables to keep up to date, and nothing else is ever emptied. The directory is deleted only when it
 * is what the sandbox left there (absent, empty, or a PostgreSQL data directory, not a link, no live server on it);
 * once the consumer is up, {@link #verify} checks that its DataSource really is this server.
 */
final class SandboxDatabase {
    static final Path DIRECTORY = Path.of("data", "sandbox-postgres");

    private final Path directory;

    SandboxDatabase(Path workingDirectory) {
        this.directory = workingDirectory.resolve(DIRECTORY).toAbsolutePath().normalize();
    }

    /** The embedded-dir setting the consumer is given: relative, as the other embedded-dir values are. */
    String setting() {
        return DIRECTORY.toString();
    }

    Path directory() {
        return directory;
    }

    /** Deletes the sandbox's data directory so that the embedded server starts on a new, empty database. */
    void recreate() {
        if (Files.isSymbolicLink(directory)) {
            throw refuse("is a symbolic link");
        }
        if (!Files.exists(directory, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
            throw refuse("is not a directory");
        }
        if (!isEmpty(directory) && !Files.isRegularFile(directory.resolve("PG_VERSION"))) {
            throw refuse("is not a PostgreSQL data directory");
        }
        Long pid = livePostmaster();
        if (pid != null) {
            throw refuse("is in use by a running PostgreSQL (pid " + pid + "): stop the other sandbox run first");
        }
        deleteRecursively(directory);
    }

    /** Stops startup unless the server behind {@code dataSource} keeps its data in the sandbox's directory. */
    void verify(DataSource dataSource) {
        String served;
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("show data_directory")) {
            rs.next();
            served = rs.getString(1);
        } catch (SQLException e) {
            throw new ConfigurationException("sandbox mode could not check its database: " + e.getMessage(), e);
        }
        if (!sameDirectory(Path.of(served), directory)) {
            throw new ConfigurationException("sandbox mode runs only on its own embedded database in " + DIRECTORY
                    + ", but the inbox DataSource is another database: leave sandbox mode (configure your database,"
                    + " API and secret) or unbind that DataSource");
        }
    }

    private ConfigurationException refuse(String why) {
        return new ConfigurationException("sandbox mode recreates its own database in " + directory + ", which "
                + why + "; move it away or leave sandbox mode");
    }

    private Long livePostmaster() {
        Path pidFile = directory.resolve("postmaster.pid");
        if (!Files.isRegularFile(pidFile)) {
            return null;
        }
        try {
            List<String> lines = Files.readAllLines(pidFile);
            long pid = Long.parseLong(lines.get(0).trim());
            return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).isPresent() ? pid : null;
        } catch (IOException | RuntimeException e) {
            // unreadable pid file: PostgreSQL's own check decides when it starts
            return null;
        }
    }

    private static boolean sameDirectory(Path a, Path b) {
        try {
            return Files.isSameFile(a, b);
        } catch (IOException e) {
            return a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize());
        }
    }

    private static boolean isEmpty(Path dir) {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.findAny().isEmpty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void deleteRecursively(Path dir) {
        // Files.walk does not follow links: a link inside is deleted, never what it points to
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new ConfigurationException("sandbox mode could not delete its old database in " + dir + ": "
                    + e.getMessage(), e);
        }
    }
}
