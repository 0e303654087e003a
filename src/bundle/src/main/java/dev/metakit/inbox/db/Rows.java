package dev.metakit.inbox.db;

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

/** A query's rows as column label → value maps (timestamps as ISO-8601 text), for JSON views such as the ops page. */
public final class Rows {
    private Rows() {
    }

    public static List<Map<String, Object>> read(DataSource dataSource, String sql) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return read(c, sql);
        }
    }

    public static List<Map<String, Object>> read(Connection c, String sql) throws SQLException {
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
