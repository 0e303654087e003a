package dev.metakit.inbox.db;

import dev.metakit.inbox.config.ConfigurationException;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * Where the database is, from {@code DATABASE_URL} in either the JDBC form ({@code jdbc:postgresql://host:port/db})
 * or the URL form many platforms hand out ({@code postgres://user:pass@host:port/db}). Explicit credentials win
 * over those in the URL. A blank URL means "start the embedded PostgreSQL".
 */
public record DatabaseSettings(String jdbcUrl, String user, String password) {

    public boolean embedded() {
        return jdbcUrl == null;
    }

    /** How errors name the setting: its key and both of its environment names (EnvironmentNames). */
    private static final String SETTING = "metakit.database.url (METAKIT_DATABASE_URL or DATABASE_URL)";

    public static DatabaseSettings parse(String url, String user, String password) {
        if (url == null || url.isBlank()) {
            return new DatabaseSettings(null, blankToNull(user), blankToNull(password));
        }
        String trimmed = url.trim();
        if (trimmed.startsWith("jdbc:postgresql:")) {
            return new DatabaseSettings(trimmed, blankToNull(user), blankToNull(password));
        }
        if (trimmed.startsWith("postgres://") || trimmed.startsWith("postgresql://")) {
            return fromUrlForm(trimmed, blankToNull(user), blankToNull(password));
        }
        throw new ConfigurationException(SETTING + " must start with jdbc:postgresql:// or postgres://, got '"
                + schemeOf(trimmed) + "...'");
    }

    private static DatabaseSettings fromUrlForm(String url, String user, String password) {
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new ConfigurationException(SETTING + " is not a valid URL (" + e.getReason() + ")");
        }
        if (uri.getHost() == null) {
            throw new ConfigurationException(SETTING + " names no host");
        }
        String path = uri.getRawPath();
        if (path == null || path.length() <= 1) {
            throw new ConfigurationException(SETTING + " names no database (expected postgres://user:pass@host:port/db)");
        }
        String userInfo = uri.getRawUserInfo();
        String urlUser = null;
        String urlPassword = null;
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            urlUser = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
            urlPassword = colon < 0 ? null : decode(userInfo.substring(colon + 1));
        }
        String jdbc = "jdbc:postgresql://" + uri.getHost() + (uri.getPort() > 0 ? ":" + uri.getPort() : "") + path
                + (uri.getRawQuery() != null ? "?" + uri.getRawQuery() : "");
        return new DatabaseSettings(jdbc, user != null ? user : urlUser, password != null ? password : urlPassword);
    }

    /** The URL as it may be logged: the JDBC form never carries the password in this record. */
    public String describe() {
        return embedded() ? "embedded PostgreSQL" : jdbcUrl.replaceAll("password=[^&]*", "password=***");
    }

    @Override
    public String toString() {
        return "DatabaseSettings[" + describe() + ", user=" + user + "]";
    }

    private static String schemeOf(String url) {
        int colon = url.indexOf(':');
        return colon < 0 ? url.substring(0, Math.min(url.length(), 12)) : url.substring(0, colon);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
