package dev.metakit.inbox.springboot;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.filter.OncePerRequestFilter;

import java.io.IOException;

/**
 * The webhook's body limit (metakit.max-body-bytes), as the standalone run's {@code camel.server.max-body-size}: a
 * request that declares a larger body is answered 413 before it is read; a chunked one is cut off when it passes
 * the limit. MetaKit's deliveries are a few kilobytes.
 */
class WebhookBodyLimit extends OncePerRequestFilter {
    private final long maxBytes;

    WebhookBodyLimit(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (request.getContentLengthLong() > maxBytes) {
            response.setHeader("Connection", "close");
            response.sendError(HttpServletResponse.SC_REQUEST_ENTITY_TOO_LARGE);
            return;
        }
        chain.doFilter(request.getContentLengthLong() < 0 ? new LimitedBodyRequest(request, maxBytes) : request,
                response);
    }
}
