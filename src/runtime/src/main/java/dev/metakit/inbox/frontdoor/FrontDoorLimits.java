package dev.metakit.inbox.frontdoor;

/**
 * The public server's limits. A request (head and body) must arrive within {@code requestReadTimeoutMillis} of its
 * first byte; a connection with no traffic at all is closed after {@code idleTimeoutSeconds}; at most
 * {@code maxConnections} are open at once; and requests larger than {@link #SMALL_REQUEST_BYTES} that are still
 * being received hold at most {@code maxPendingBodyBytes} between them.
 */
public record FrontDoorLimits(int idleTimeoutSeconds, long requestReadTimeoutMillis, int maxConnections,
                              long maxPendingBodyBytes) {

    /**
     * Requests up to this size never count against the memory budget, so a flood of half-sent large bodies cannot
     * starve ordinary deliveries (a few KiB each); their own total is bounded by the connection cap.
     */
    public static final int SMALL_REQUEST_BYTES = 64 * 1024;

    public FrontDoorLimits {
        require(idleTimeoutSeconds > 0, "METAKIT_HTTP_IDLE_TIMEOUT_SECONDS must be positive");
        require(requestReadTimeoutMillis > 0, "METAKIT_HTTP_REQUEST_READ_TIMEOUT_MILLIS must be positive");
        require(maxConnections > 0, "METAKIT_HTTP_MAX_CONNECTIONS must be positive");
        require(maxPendingBodyBytes > 0, "METAKIT_HTTP_MAX_PENDING_BODY_BYTES must be positive");
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new dev.metakit.inbox.config.ConfigurationException(message);
        }
    }
}
