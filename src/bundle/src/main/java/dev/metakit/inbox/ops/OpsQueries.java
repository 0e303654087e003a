package dev.metakit.inbox.ops;

import dev.metakit.inbox.feed.FeedMaintenance;
import dev.metakit.inbox.inbox.InboxAdmin;
import dev.metakit.inbox.reconcile.AccountTable;
import dev.metakit.inbox.reconcile.DeliveryStatusWatch;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;

/** What the ops page shows, read from the owners of each table (no Camel). */
public class OpsQueries {
    private final DataSource dataSource;

    public OpsQueries(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    public Map<String, Object> summary() throws SQLException {
        Map<String, Object> out = new LinkedHashMap<>();
        InboxAdmin inbox = new InboxAdmin(dataSource);
        InboxAdmin.Backlog backlog = inbox.backlog();
        out.put("backlog", backlog.pending());
        out.put("failed", backlog.failed());
        out.put("oldestAgeSeconds", backlog.oldestPendingAge().toSeconds());
        out.put("retainedEstimate", inbox.retainedEstimate());
        out.put("throughput", inbox.throughputLastHour());
        out.put("failedRows", inbox.recentFailures());
        out.put("endpoints", DeliveryStatusWatch.endpoints(dataSource));
        out.put("accounts", AccountTable.overview(dataSource));
        out.put("feed", new FeedMaintenance(dataSource).lagSummary());
        return out;
    }
}
