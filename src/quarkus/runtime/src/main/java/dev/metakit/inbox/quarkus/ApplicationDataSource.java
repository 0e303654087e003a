package dev.metakit.inbox.quarkus;

import jakarta.enterprise.inject.Instance;
import org.apache.camel.CamelContext;

import javax.sql.DataSource;
import java.util.function.Supplier;

/**
 * The application's default datasource (Agroal's, {@code quarkus.datasource.*}) in Camel's registry under
 * {@value #BEAN_NAME}, the name the extension's defaults give {@code metakit.database.data-source-bean}: the bundle then
 * keeps its tables and migrations in the application's database through the application's pool, and starts no pool of
 * its own. CDI knows that datasource by type only (its name, {@code <default>}, is no bean name Camel can look up).
 * Bound lazily: a host whose {@code metakit.database.data-source-bean} names another DataSource never touches it, and
 * one that configured no datasource is told so by Agroal's own message when the bundle starts.
 */
final class ApplicationDataSource {
    static final String BEAN_NAME = "quarkusDefaultDataSource";

    private ApplicationDataSource() {
    }

    static void bind(CamelContext context, Instance<DataSource> defaultDataSource) {
        Supplier<Object> lookup = defaultDataSource::get;
        context.getRegistry().bind(BEAN_NAME, DataSource.class, lookup);
    }
}
