package dev.metakit.inbox.frontdoor;

import org.apache.camel.Exchange;

import java.util.concurrent.Executor;

/**
 * Told, for each exchange the front door routes on an event loop, how to run a task on that loop. A step of the route
 * that completes later (a commit, a reply) can resume the route there through it, so the thread that completed the
 * step moves on at once. The front door does not know which steps do: whoever wires it says what to do with the
 * loop, typically set it as the exchange property such a step reads.
 */
@FunctionalInterface
public interface EventLoopHandOff {
    void offer(Exchange exchange, Executor eventLoop);

    EventLoopHandOff NONE = (exchange, eventLoop) -> {
    };
}
