package dev.metakit.inbox.springboot;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

import java.io.IOException;

/** A request whose body (of no declared length) fails to read past a limit. */
class LimitedBodyRequest extends HttpServletRequestWrapper {
    private final long maxBytes;

    LimitedBodyRequest(HttpServletRequest request, long maxBytes) {
        super(request);
        this.maxBytes = maxBytes;
    }

    @Override
    public ServletInputStream getInputStream() throws IOException {
        ServletInputStream in = super.getInputStream();
        return new ServletInputStream() {
            private long read;

            @Override
            public int read() throws IOException {
                int b = in.read();
                if (b >= 0) {
                    count(1);
                }
                return b;
            }

            @Override
            public int read(byte[] buffer, int offset, int length) throws IOException {
                int n = in.read(buffer, offset, length);
                if (n > 0) {
                    count(n);
                }
                return n;
            }

            private void count(int n) throws IOException {
                read += n;
                if (read > maxBytes) {
                    throw new IOException("request body larger than metakit.max-body-bytes (" + maxBytes + ")");
                }
            }

            @Override
            public boolean isFinished() {
                return in.isFinished();
            }

            @Override
            public boolean isReady() {
                return in.isReady();
            }

            @Override
            public void setReadListener(ReadListener listener) {
                in.setReadListener(listener);
            }
        };
    }
}
