package dev.metakit.inbox.support;

import dev.metakit.inbox.db.DatabaseSettings;
import dev.metakit.inbox.db.InboxMigrations;
import dev.metakit.inbox.db.InboxSchema;

import javax.sql.DataSource;

/** The test database holds the bundle's schema, migrated as the bundle migrates a host's database. */
public final class BundleTestSchema implements TestDatabaseSchema {
    @Override
    public String name() {
        return InboxSchema.DEFAULT;
    }

    @Override
    public String historyTable() {
        return InboxMigrations.HISTORY_TABLE;
    }

    @Override
    public String markerTable() {
        return "webhook_inbox";
    }

    @Override
    public void migrate(DataSource dataSource) {
        InboxMigrations.migrate(dataSource);
    }

    @Override
    public Server server(String url, String user, String password) {
        DatabaseSettings settings = DatabaseSettings.parse(url, user, password);
        return new Server(settings.jdbcUrl(), settings.user(), settings.password(), settings.describe());
    }
}
