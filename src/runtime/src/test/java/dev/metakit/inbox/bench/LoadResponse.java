package dev.metakit.inbox.bench;

import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;

/**
 * One HTTP/1.1 response as the load generators read it off their own sockets, the body skipped.
 *
 * @param status     the status code
 * @param retryAfter the Retry-After header, or null
 * @param close      the server closes the connection after it
 */
record LoadResponse(int status, String retryAfter, boolean close) {

    /**
     * Reads one response: status line, headers, then a Content-Length or chunked body, or without either a body until
     * the server closes (discarded into {@code buf}).
     */
    static LoadResponse read(InputStream in, byte[] buf) throws IOException {
        String statusLine = readLine(in);
        if (statusLine == null) {
            throw new IOException("connection closed before the response");
        }
        // HTTP/1.1 200 OK
        int sp = statusLine.indexOf(' ');
        if (sp < 0 || statusLine.length() < sp + 4) {
            throw new IOException("bad status line: " + statusLine);
        }
        int status = Integer.parseInt(statusLine.substring(sp + 1, sp + 4));
        long length = -1;
        boolean chunked = false;
        boolean close = false;
        String retryAfter = null;
        String line;
        while ((line = readLine(in)) != null && !line.isEmpty()) {
            int colon = line.indexOf(':');
            if (colon <= 0) {
                continue;
            }
            String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            switch (name) {
                case "content-length" -> length = Long.parseLong(value);
                case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                case "connection" -> close = value.equalsIgnoreCase("close");
                case "retry-after" -> retryAfter = value;
                default -> { }
            }
        }
        if (line == null) {
            throw new IOException("connection closed in the response headers");
        }
        if (chunked) {
            while (true) {
                String size = readLine(in);
                if (size == null) {
                    throw new IOException("connection closed in a chunked body");
                }
                int semi = size.indexOf(';');
                long n = Long.parseLong((semi >= 0 ? size.substring(0, semi) : size).trim(), 16);
                if (n == 0) {
                    // trailers until an empty line
                    String trailer;
                    while ((trailer = readLine(in)) != null && !trailer.isEmpty()) {
                        // ignored
                    }
                    break;
                }
                skip(in, n, buf);
                readLine(in);
            }
        } else if (length > 0) {
            skip(in, length, buf);
        } else if (length < 0 && status != 204 && status != 304) {
            // no framing: body until close
            while (in.read(buf) >= 0) {
                // drain
            }
            close = true;
        }
        return new LoadResponse(status, retryAfter, close);
    }

    private static void skip(InputStream in, long n, byte[] buf) throws IOException {
        while (n > 0) {
            int r = in.read(buf, 0, (int) Math.min(buf.length, n));
            if (r < 0) {
                throw new IOException("connection closed in the response body");
            }
            n -= r;
        }
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder(64);
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                int len = sb.length();
                if (len > 0 && sb.charAt(len - 1) == '\r') {
                    sb.setLength(len - 1);
                }
                return sb.toString();
            }
            sb.append((char) c);
        }
        return sb.length() == 0 ? null : sb.toString();
    }
}
