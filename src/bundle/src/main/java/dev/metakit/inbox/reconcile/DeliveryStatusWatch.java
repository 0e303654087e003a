package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.db.Rows;
import dev.metakit.inbox.metakit.ApiWebhook;
import dev.metakit.inbox.metakit.MetaKitJson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Compares {@code GET /v1/webhooks} with what the last poll stored. A delivery MetaKit gave up on shows as
 * {@code lastDeliveryStatus = failed} with a newer {@code lastDeliveryAt}; that is worth one WARN line and a full
 * reconcile, since the event it carried is gone for good. Every statement on {@code webhook_endpoints} is here.
 */
public class DeliveryStatusWatch {
    private static final Logger LOG = LoggerFactory.getLogger(DeliveryStatusWatch.class);
    private final MetaKitJson json = new MetaKitJson();
    private DataSource dataSource;

    /** @return true if any endpoint shows a failure not seen before */
    public boolean check(byte[] body) throws SQLException {
        boolean newFailure = false;
        try (Connection c = dataSource.getConnection()) {
            for (ApiWebhook w : json.webhooks(body)) {
                Stored before = stored(c, w.id());
                boolean failed = "failed".equals(w.lastDeliveryStatus());
                boolean newer = before == null || !Objects.equals(before.status, w.lastDeliveryStatus())
                        || (w.lastDeliveryAt() != null && (before.at == null || w.lastDeliveryAt().isAfter(before.at)));
                if (failed && newer) {
                    LOG.warn("MetaKit gave up delivering to webhook endpoint {} ({}) at {}: running a full reconcile",
                            w.id(), w.url(), w.lastDeliveryAt());
                    newFailure = true;
                }
                store(c, w);
            }
        }
        return newFailure;
    }

    private record Stored(String status, Instant at) {
    }

    private static Stored stored(Connection c, String id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "select last_delivery_status, last_delivery_at from webhook_endpoints where endpoint_id = ?")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                Timestamp at = rs.getTimestamp(2);
                return new Stored(rs.getString(1), at == null ? null : at.toInstant());
            }
        }
    }

    private static void store(Connection c, ApiWebhook w) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                insert into webhook_endpoints (endpoint_id, url, last_delivery_status, last_delivery_at, checked_at)
                values (?, ?, ?, ?, now())
                on conflict on constraint webhook_endpoints_pk do update
                   set url = excluded.url, last_delivery_status = excluded.last_delivery_status,
                       last_delivery_at = excluded.last_delivery_at, checked_at = now()""")) {
            ps.setString(1, w.id());
            ps.setString(2, w.url());
            ps.setString(3, w.lastDeliveryStatus());
            ps.setTimestamp(4, w.lastDeliveryAt() == null ? null : Timestamp.from(w.lastDeliveryAt()));
            ps.executeUpdate();
        }
    }

    /** Each endpoint's last delivery status ({@code none} before its first delivery), by endpoint id. */
    public static Map<String, String> statuses(DataSource dataSource) throws SQLException {
        Map<String, String> out = new LinkedHashMap<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                "select endpoint_id, coalesce(last_delivery_status, 'none') from webhook_endpoints order by 1");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getString(2));
            }
        }
        return out;
    }

    /** The endpoints as the last poll stored them, for the ops page. */
    public static List<Map<String, Object>> endpoints(DataSource dataSource) throws SQLException {
        return Rows.read(dataSource, """
                select endpoint_id as id, url, last_delivery_status as status, last_delivery_at as "lastDeliveryAt",
                       checked_at as "checkedAt"
                  from webhook_endpoints order by endpoint_id""");
    }

    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
    }
}
