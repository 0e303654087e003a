package dev.metakit.inbox.frontdoor;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Holds the public server's connections to {@link FrontDoorLimits}. Each connection gets two small handlers around
 * the HTTP decoder: one before it sees the raw bytes (a request has started; how much of it is held), one after it
 * sees whole requests and answers (the request was read; the answer was written). Everything per connection runs on
 * its event loop, so only the totals shared by all connections are atomic.
 *
 * <p>Per request this costs one scheduled deadline and its cancellation; per read a few field updates (and one
 * atomic add only for requests over {@link FrontDoorLimits#SMALL_REQUEST_BYTES}).
 */
final class ConnectionGuard {
    static final String RAW_HANDLER = "metakitGuardRaw";
    static final String DECODED_HANDLER = "metakitGuardDecoded";

    /** set on a connection this guard closed, so its broken-off request is not also counted as the client's doing */
    private static final AttributeKey<Boolean> CUT = AttributeKey.valueOf("metakitCutByGuard");

    private final FrontDoorLimits limits;
    private final Supplier<FrontDoorEvents> events;
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicLong largePending = new AtomicLong();

    ConnectionGuard(FrontDoorLimits limits, Supplier<FrontDoorEvents> events) {
        this.limits = limits;
        this.events = events;
    }

    /**
     * Takes a new connection in: installs one handler before {@code decoderName} (raw bytes) and one before
     * {@code connectionHandlerName} (Vert.x's connection handler, so after the codec), or closes the connection at
     * once when the cap is reached.
     */
    void admit(ChannelPipeline pipeline, String decoderName, String connectionHandlerName) {
        if (open.incrementAndGet() > limits.maxConnections()) {
            open.decrementAndGet();
            events.get().connectionCut("connection_limit");
            pipeline.channel().close();
            return;
        }
        Connection c = new Connection();
        pipeline.addBefore(decoderName, RAW_HANDLER, c.raw);
        pipeline.addBefore(connectionHandlerName, DECODED_HANDLER, c.decoded);
    }

    static boolean cutByGuard(Channel channel) {
        return Boolean.TRUE.equals(channel.attr(CUT).get());
    }

    private void cut(ChannelHandlerContext ctx, String reason) {
        events.get().connectionCut(reason);
        ctx.channel().attr(CUT).set(Boolean.TRUE);
        ctx.close();
    }

    int openConnections() {
        return open.get();
    }

    long largePendingBytes() {
        return largePending.get();
    }

    private enum State { WAITING, READING, ANSWERING }

    private final class Connection {
        private State state = State.WAITING;
        private boolean bytesWhileAnswering;
        private long held;
        private boolean large;
        private ScheduledFuture<?> deadline;
        private boolean released;

        final ChannelDuplexHandler raw = new ChannelDuplexHandler() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
                if (msg instanceof ByteBuf bytes) {
                    received(ctx, bytes.readableBytes());
                }
                ctx.fireChannelRead(msg);
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) throws Exception {
                release();
                ctx.fireChannelInactive();
            }

            @Override
            public void handlerRemoved(ChannelHandlerContext ctx) {
                release();
            }
        };

        final ChannelDuplexHandler decoded = new ChannelDuplexHandler() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
                if (msg instanceof LastHttpContent) {
                    if (state == State.READING) {
                        readWhole();
                    } else if (state == State.ANSWERING) {
                        // a pipelined request that arrived whole while the one before was answered: no clock for it
                        bytesWhileAnswering = false;
                    }
                }
                ctx.fireChannelRead(msg);
            }

            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
                if (msg instanceof LastHttpContent) {
                    answered(ctx);
                }
                ctx.write(msg, promise);
            }
        };

        private void received(ChannelHandlerContext ctx, int bytes) {
            if (released) {
                return; // bytes of a read already under way when the connection was closed: nothing holds them now
            }
            switch (state) {
                case WAITING -> {
                    state = State.READING;
                    deadline = ctx.executor().schedule(() -> tooSlow(ctx), limits.requestReadTimeoutMillis(),
                            TimeUnit.MILLISECONDS);
                    hold(ctx, bytes);
                }
                case READING -> hold(ctx, bytes);
                case ANSWERING -> bytesWhileAnswering = true; // the next request, pipelined: its clock starts below
            }
        }

        private void hold(ChannelHandlerContext ctx, int bytes) {
            held += bytes;
            long add;
            if (large) {
                add = bytes;
            } else if (held > FrontDoorLimits.SMALL_REQUEST_BYTES) {
                large = true;
                add = held;
            } else {
                return;
            }
            if (largePending.addAndGet(add) > limits.maxPendingBodyBytes()) {
                release(); // at once: the close completes later, and the budget is needed now
                cut(ctx, "body_memory");
            }
        }

        private void readWhole() {
            state = State.ANSWERING;
            cancelDeadline();
            releaseHeld();
        }

        private void answered(ChannelHandlerContext ctx) {
            if (state == State.READING) {
                // answered before the request was read whole (413, 400): the server closes it or reads the rest on
                // the same clock
                return;
            }
            state = State.WAITING;
            if (bytesWhileAnswering) {
                bytesWhileAnswering = false;
                received(ctx, 0);
            }
        }

        private void tooSlow(ChannelHandlerContext ctx) {
            if (state == State.READING && !released && ctx.channel().isActive()) {
                release();
                cut(ctx, "slow");
            }
        }

        private void cancelDeadline() {
            if (deadline != null) {
                deadline.cancel(false);
                deadline = null;
            }
        }

        private void releaseHeld() {
            if (large) {
                largePending.addAndGet(-held);
            }
            held = 0;
            large = false;
        }

        private void release() {
            if (released) {
                return;
            }
            released = true;
            cancelDeadline();
            releaseHeld();
            open.decrementAndGet();
        }
    }
}
