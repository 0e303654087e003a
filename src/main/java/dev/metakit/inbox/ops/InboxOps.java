package dev.metakit.inbox.ops;

import org.apache.camel.CamelContext;
import org.apache.camel.CamelContextAware;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Instant;

/**
 * The bean {@code inboxMaintenance}: replay and requeue for a route's {@code bean:} step, e.g.
 * {@code bean:inboxMaintenance?method=replayAccount(2)}. The inbox DataSource is looked up by name when first
 * needed, so the route files may load in any order.
 */
public class InboxOps implements CamelContextAware {
    private CamelContext camelContext;
    private String dataSourceBean = "inboxDataSource";
    private volatile InboxMaintenance maintenance;

    /** Replays one account's stored deliveries (account null: all) received in [from, to); ISO-8601 instants or null. */
    public int replay(Long account, String from, String to) throws SQLException {
        return maintenance().replay(account, instant(from), instant(to));
    }

    public int replayAccount(long account) throws SQLException {
        return maintenance().replayAccount(account);
    }

    public int requeueFailed() throws SQLException {
        return maintenance().requeueFailed(null);
    }

    public int requeueFailedOfAccount(long account) throws SQLException {
        return maintenance().requeueFailed(account);
    }

    private static Instant instant(String s) {
        return s == null || s.isBlank() ? null : Instant.parse(s.trim());
    }

    private InboxMaintenance maintenance() {
        if (maintenance == null) {
            maintenance = new InboxMaintenance(camelContext.getRegistry()
                    .lookupByNameAndType(dataSourceBean, DataSource.class));
        }
        return maintenance;
    }

    public void setDataSourceBean(String name) {
        this.dataSourceBean = name;
    }

    @Override
    public void setCamelContext(CamelContext camelContext) {
        this.camelContext = camelContext;
    }

    @Override
    public CamelContext getCamelContext() {
        return camelContext;
    }
}
