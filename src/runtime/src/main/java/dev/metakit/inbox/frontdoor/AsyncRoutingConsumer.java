package dev.metakit.inbox.frontdoor;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;
import org.apache.camel.Exchange;
import org.apache.camel.ExchangePattern;
import org.apache.camel.Processor;
import org.apache.camel.component.platform.http.PlatformHttpEndpoint;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpConsumer;
import org.apache.camel.spi.HeaderFilterStrategy;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.List;

/**
 * Camel's Vert.x platform-http consumer, routing asynchronously on the event loop: Camel 4.18's consumer runs every
 * route on a Vert.x worker thread ({@code executeBlocking}) and holds that thread until the route ends, which for
 * the ingest route is the inbox commit. This one starts the route on the event loop that read the request; a step
 * that completes later (the ingest route's hand-off to its store threads) returns at once and the route resumes
 * where it completes, so the loop goes on reading other requests. The answer is written on the connection's event
 * loop, as Camel's consumer writes it.
 *
 * <p>What Camel's consumer does besides (form and multipart bodies, proxy mode, streamed bodies) stays Camel's: those
 * requests and endpoints take its worker-thread path unchanged. The steps of a route served here run on the event
 * loop until the route hands off, so they must not block: the bundle's ingest route does not (signature check, JSON
 * fields, then a {@code threads} step before the blocking store); a step that blocks belongs after such a hand-off.
 */
final class AsyncRoutingConsumer extends VertxPlatformHttpConsumer {
    /** Camel's own answer writer (package-private in camel-platform-http-vertx 4.18), so the answers stay alike */
    private static final MethodHandle WRITE_RESPONSE = camelResponseWriter();

    private final boolean camelPathOnly;

    AsyncRoutingConsumer(PlatformHttpEndpoint endpoint, Processor processor, List<Handler<RoutingContext>> handlers,
                         String routerName) {
        super(endpoint, processor, handlers, routerName);
        this.camelPathOnly = endpoint.isHttpProxy() || endpoint.isUseStreaming();
    }

    @Override
    protected void handleRequest(RoutingContext ctx) {
        if (camelPathOnly || isSuspended() || hasFormBody(ctx)) {
            super.handleRequest(ctx);
            return;
        }
        Exchange exchange = createExchange(false);
        exchange.setPattern(ExchangePattern.InOut);
        Context loop = Vertx.currentContext();
        processHttpRequest(exchange, ctx).onComplete(read -> {
            if (read.failed()) {
                fail(exchange, ctx, read.cause());
                return;
            }
            try {
                createUoW(exchange);
            } catch (Exception e) {
                fail(exchange, ctx, e);
                return;
            }
            getAsyncProcessor().process(exchange, doneSync -> {
                if (doneSync || Vertx.currentContext() == loop) {
                    answer(exchange, ctx);
                } else {
                    // resumed by a thread of whoever completed a step: the answer belongs to the loop
                    loop.runOnContext(v -> answer(exchange, ctx));
                }
            });
        });
    }

    private void answer(Exchange exchange, RoutingContext ctx) {
        Future<Void> written;
        try {
            written = writeResponse(ctx, exchange, getEndpoint().getHeaderFilterStrategy(),
                    getEndpoint().isMuteException());
        } catch (Throwable t) {
            fail(exchange, ctx, t);
            return;
        }
        written.onComplete(w -> {
            if (w.succeeded()) {
                complete(exchange);
            } else {
                fail(exchange, ctx, w.cause());
            }
        });
    }

    /** as Camel's consumer handles a failure outside the route: reported, the request failed, the exchange done */
    private void fail(Exchange exchange, RoutingContext ctx, Throwable failure) {
        getExceptionHandler().handleException("Failed handling platform-http endpoint " + getEndpoint().getPath(),
                failure);
        ctx.fail(failure);
        if (getEndpoint().isHandleWriteResponseError() && failure != null) {
            Exception existing = exchange.getException();
            if (existing != null) {
                failure.addSuppressed(existing);
            }
            exchange.setProperty(Exchange.EXCEPTION_CAUGHT, failure);
            exchange.setException(failure);
        }
        complete(exchange);
    }

    private void complete(Exchange exchange) {
        doneUoW(exchange);
        releaseExchange(exchange, false);
    }

    private static boolean hasFormBody(RoutingContext ctx) {
        String type = ctx.request().getHeader("Content-Type");
        if (type == null) {
            return false;
        }
        String t = type.trim().toLowerCase(java.util.Locale.ROOT);
        return t.startsWith("application/x-www-form-urlencoded") || t.startsWith("multipart/form-data");
    }

    @SuppressWarnings("unchecked")
    private static Future<Void> writeResponse(RoutingContext ctx, Exchange exchange, HeaderFilterStrategy filter,
                                              boolean muteExceptions) throws Throwable {
        return (Future<Void>) WRITE_RESPONSE.invokeExact(ctx, exchange, filter, muteExceptions);
    }

    private static MethodHandle camelResponseWriter() {
        try {
            Class<?> support = Class.forName(
                    "org.apache.camel.component.platform.http.vertx.VertxPlatformHttpSupport");
            var method = support.getDeclaredMethod("writeResponse", RoutingContext.class, Exchange.class,
                    HeaderFilterStrategy.class, boolean.class);
            method.setAccessible(true);
            return MethodHandles.lookup().unreflect(method).asType(MethodType.methodType(Future.class,
                    RoutingContext.class, Exchange.class, HeaderFilterStrategy.class, boolean.class));
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("camel-platform-http-vertx has no VertxPlatformHttpSupport.writeResponse "
                    + "as in Camel 4.18: the front door's engine needs it", e);
        }
    }
}
