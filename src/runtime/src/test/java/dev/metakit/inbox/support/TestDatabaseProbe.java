package dev.metakit.inbox.support;

/**
 * A test JVM in miniature, for {@code TestDatabaseSafetyTest}: takes the test database the way every test does,
 * empties it as every test does, and prints the JDBC URL it used.
 */
public final class TestDatabaseProbe {
    private TestDatabaseProbe() {
    }

    public static void main(String[] args) {
        TestDatabase.truncateAll();
        System.out.println("test database: " + TestDatabase.jdbcUrl());
        System.exit(0);
    }
}
