package dev.metakit.inbox.ops;

import dev.metakit.inbox.worker.InboxQueue;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What the ops page shows, read from the inbox database in one go (plain SQL, no Camel). */
public class OpsQueries {
    private static final String THROUGHPUT = """
            select to_char(m at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI"Z"') as minute,
                   sum(received)::int as received, sum(processed)::int as processed
              from (select date_trunc('minute', received_at) m, 1 received, 0 processed from webhook_inbox
                     where received_at > now() - interval '1 hour'
                    union all
                    select date_trunc('minute', processed_at), 0, 1 from webhook_inbox
                     where processed_at > now() - interval '1 hour') x
             group by m order by m""";
    private static final String FAILED = """
            select delivery_key as key, account_id as "accountId", event, attempts, last_error as "lastError",
                   failed_at as "failedAt"
              from webhook_inbox where failed_at is not null order by failed_at desc limit 100""";
    private static final String ENDPOINTS = """
            select endpoint_id as id, url, last_delivery_status as status, last_delivery_at as "lastDeliveryAt",
                   checked_at as "checkedAt"
              from webhook_endpoints order by endpoint_id""";
    private static final String ACCOUNTS = """
            select a.account_id as "accountId", a.last_reconciled_at as "lastReconciledAt",
                   a.last_reconcile_error as "lastError",
                   (select count(*) from positions p where p.account_id = a.account_id and p.status = 'open')::int
                       as "openPositions",
                   f.seq as "lastChangeSeq", f.kind as "lastChangeKind", f.ticket as "lastChangeTicket",
                   f.published_at as "lastChangePublishedAt"
              from accounts a
              left join lateral (select seq, kind, ticket, published_at from position_changes pc
                                  where pc.account_id = a.account_id order by seq desc limit 1) f on true
             order by a.account_id limit 500""";
    /** the change feed's lag: how long its oldest unpublished change has waited */
    private static final String FEED_LAG = """
            select coalesce(extract(epoch from now() - min(reconciled_at)), 0)::bigint as "lagSeconds",
                   count(*)::int as "unpublished"
              from position_changes where published_at is null""";

    private final DataSource dataSource;

    public OpsQueries(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    public Map<String, Object> summary() throws SQLException {
        Map<String, Object> out = new LinkedHashMap<>();
        InboxQueue.Backlog backlog = new InboxQueue(dataSource).backlog();
        out.put("backlog", backlog.pending());
        out.put("failed", backlog.failed());
        out.put("oldestAgeSeconds", backlog.oldestPendingAge().toSeconds());
        try (Connection c = dataSource.getConnection()) {
            out.put("throughput", rows(c, THROUGHPUT));
            out.put("failedRows", rows(c, FAILED));
            out.put("endpoints", rows(c, ENDPOINTS));
            out.put("accounts", rows(c, ACCOUNTS));
            out.put("feed", rows(c, FEED_LAG).get(0));
        }
        return out;
    }

    private static List<Map<String, Object>> rows(Connection c, String sql) throws SQLException {
        List<Map<String, Object>> rows = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            ResultSetMetaData md = rs.getMetaData();
            while (rs.next()) {
                Map<String, Object> row = new LinkedHashMap<>();
                for (int i = 1; i <= md.getColumnCount(); i++) {
                    Object v = rs.getObject(i);
                    row.put(md.getColumnLabel(i), v instanceof Timestamp t ? t.toInstant().toString() : v);
                }
                rows.add(row);
            }
        }
        return rows;
    }
}
