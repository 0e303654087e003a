package dev.metakit.inbox.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

/**
 * One HTTP/1.1 connection on a plain socket, for requests no well-behaved client would send: repeated headers,
 * Content-Length beside Transfer-Encoding, a body cut short, one byte at a time.
 */
public final class RawHttp implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    public record Answer(int status, String body) {
    }

    public RawHttp(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        out = socket.getOutputStream();
        in = socket.getInputStream();
    }

    /** This end's port, which names the connection on the server's side too. */
    public int localPort() {
        return socket.getLocalPort();
    }

    /** The request head for {@code POST <target>}: the given header lines, then a blank line. */
    public static String head(String target, String... headerLines) {
        StringBuilder b = new StringBuilder("POST ").append(target).append(" HTTP/1.1\r\nHost: localhost\r\n");
        for (String line : headerLines) {
            b.append(line).append("\r\n");
        }
        return b.append("\r\n").toString();
    }

    public RawHttp send(String ascii) throws IOException {
        return send(ascii.getBytes(StandardCharsets.ISO_8859_1));
    }

    public RawHttp send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** Reads one answer: the status line, the headers, and a body of Content-Length bytes or in chunks. */
    public Answer read() throws IOException {
        String status = line();
        int contentLength = 0;
        boolean chunked = false;
        for (String h = line(); !h.isEmpty(); h = line()) {
            String lower = h.toLowerCase(Locale.ROOT);
            if (lower.startsWith("content-length:")) {
                contentLength = Integer.parseInt(h.substring(15).trim());
            } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                chunked = true;
            }
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (chunked) {
            for (int size = Integer.parseInt(line().trim(), 16); size > 0; size = Integer.parseInt(line().trim(), 16)) {
                body.write(in.readNBytes(size));
                line();
            }
            line();
        } else {
            body.write(in.readNBytes(contentLength));
        }
        return new Answer(Integer.parseInt(status.substring(9, 12)), body.toString(StandardCharsets.UTF_8));
    }

    /** True if the server closes the connection (end of stream or reset) within the time, reading whatever comes. */
    public boolean closedWithin(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            socket.setSoTimeout((int) Math.max(1, left / 1_000_000));
            try {
                if (in.read() < 0) {
                    return true;
                }
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException reset) {
                return true;
            }
        }
    }

    private String line() throws IOException {
        StringBuilder b = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            if (c != '\r') {
                b.append((char) c);
            }
        }
        if (c < 0 && b.isEmpty()) {
            throw new IOException("connection closed before a full answer");
        }
        return b.toString();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
