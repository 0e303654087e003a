package dev.metakit.inbox.db;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.camel.CamelContext;
import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code metakit.database.data-source-bean}: a host application's DataSource (Spring Boot's pool, say) used by the
 * bundle through its {@code inboxDataSource} and left to the host to close.
 */
class HostDataSourceTest {

    @Test
    void inboxDataSourcePassesTheHostsDataSourceThroughAndLeavesItOpen() throws Exception {
        DataSource host = TestDatabase.dataSource();
        try (DefaultCamelContext context = new DefaultCamelContext()) {
            InboxDatabase inbox = onHostPool(context, host);
            inbox.start();
            try (Connection c = inbox.getConnection(); var s = c.createStatement();
                 var rs = s.executeQuery("select count(*) from webhook_inbox")) {
                assertThat(rs.next()).isTrue();
            }
            assertThat(inbox.isWrapperFor(host.getClass())).isTrue();
            inbox.close();
        }
        try (Connection c = host.getConnection()) {
            assertThat(c.isValid(1)).as("the host's pool still serves after the bundle closed").isTrue();
        }
    }

    @Test
    void aNameWithNoDataSourceBehindItStopsStartupNamingTheSetting() throws Exception {
        try (DefaultCamelContext context = new DefaultCamelContext()) {
            InboxDatabase inbox = new InboxDatabase();
            inbox.setCamelContext(context);
            inbox.setHostDataSourceBean("noSuchPool");
            assertThatThrownBy(inbox::start).isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("metakit.database.data-source-bean").hasMessageContaining("noSuchPool");
        }
    }

    /** The bundle's database on {@code host}, bound in {@code context} as a host binds its pool; not started. */
    static InboxDatabase onHostPool(CamelContext context, DataSource host) {
        context.getRegistry().bind("hostPool", host);
        InboxDatabase inbox = new InboxDatabase();
        inbox.setCamelContext(context);
        inbox.setHostDataSourceBean("hostPool");
        return inbox;
    }
}
