package dev.metakit.inbox.frontdoor;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Every Camel and Vert.x internal the front door touches, in one place: what is not public API (a package-private
 * method reached by reflection, an {@code impl} class, a protected method overridden or called, a Netty handler's
 * name), so a Camel upgrade checks this list, not the front door's code. {@link #missing()} looks each one up by
 * reflection; a test fails when one moved on the Camel version of the BOM (FrontDoorInternalsTest). The front door
 * runs only under camel-main (the standalone runtime); a host platform serves the webhook with its own engine.
 */
public final class CamelAndVertxInternals {
    private static final String VERTX_HTTP = "org.apache.camel.component.platform.http.vertx.";

    /** One internal: a class, and a member of it (null: the class itself), with its parameter types. */
    record Internal(String why, String className, String member, String... parameterTypes) {
        @Override
        public String toString() {
            return className + (member == null ? "" : "#" + member + "(" + String.join(", ", parameterTypes) + ")")
                    + " — " + why;
        }
    }

    static final List<Internal> USED = List.of(
            // AsyncRoutingConsumer: Camel's answer writer, package-private, by a MethodHandle
            new Internal("the answers stay Camel's", VERTX_HTTP + "VertxPlatformHttpSupport", "writeResponse",
                    "io.vertx.ext.web.RoutingContext", "org.apache.camel.Exchange",
                    "org.apache.camel.spi.HeaderFilterStrategy", "boolean"),
            // AsyncRoutingConsumer extends Camel's consumer: its constructor and the protected steps it reuses
            new Internal("the consumer subclassed", VERTX_HTTP + "VertxPlatformHttpConsumer", "<init>",
                    "org.apache.camel.component.platform.http.PlatformHttpEndpoint", "org.apache.camel.Processor",
                    "java.util.List", "java.lang.String"),
            new Internal("Camel's own path for what the front door leaves to it",
                    VERTX_HTTP + "VertxPlatformHttpConsumer", "handleRequest", "io.vertx.ext.web.RoutingContext"),
            new Internal("the request read into the exchange", VERTX_HTTP + "VertxPlatformHttpConsumer",
                    "processHttpRequest", "org.apache.camel.Exchange", "io.vertx.ext.web.RoutingContext"),
            // AsyncRoutingEngine extends Camel's engine
            new Internal("the engine subclassed", VERTX_HTTP + "VertxPlatformHttpEngine", "getHandlers"),
            new Internal("the router of the server's port", VERTX_HTTP + "VertxPlatformHttpRouter",
                    "getRouterNameFromPort", "int"),
            // FrontDoorMainServer replaces camel-main's server inside MainHttpServer (doInit not called)
            new Internal("camel-main's server subclassed", "org.apache.camel.component.platform.http.main.MainHttpServer",
                    "doInit"),
            // FrontDoorServer extends Camel's Vert.x server and overrides its start and stop
            new Internal("Camel's server subclassed", VERTX_HTTP + "VertxPlatformHttpServer", "startServer"),
            new Internal("Camel's server subclassed", VERTX_HTTP + "VertxPlatformHttpServer", "stopServer"),
            new Internal("Camel's server subclassed", VERTX_HTTP + "VertxPlatformHttpServer", "stopVertx"),
            // FrontDoorServer: one server per event loop, and the connection's Netty channel
            new Internal("an event loop context per server", "io.vertx.core.impl.VertxInternal",
                    "createEventLoopContext"),
            new Internal("the connection's Netty channel (ConnectionGuard, StrictRequestDecoder)",
                    "io.vertx.core.net.impl.ConnectionBase", "channel"),
            // StrictRequestDecoder replaces Vert.x's decoder, by its pipeline name "httpDecoder"
            new Internal("Content-Length beside chunked refused", "io.vertx.core.http.impl.VertxHttpRequestDecoder",
                    "<init>", "io.vertx.core.http.HttpServerOptions"),
            new Internal("Content-Length beside chunked refused", "io.netty.handler.codec.http.HttpObjectDecoder",
                    "handleTransferEncodingChunkedWithContentLength", "io.netty.handler.codec.http.HttpMessage"));

    private CamelAndVertxInternals() {
    }

    /** The internals that are not where the front door expects them, each with why it is used. */
    public static List<String> missing() {
        return missing(USED);
    }

    static List<String> missing(List<Internal> internals) {
        List<String> missing = new ArrayList<>();
        for (Internal internal : internals) {
            try {
                find(internal);
            } catch (ReflectiveOperationException | LinkageError e) {
                missing.add(internal + ": " + e);
            }
        }
        return missing;
    }

    private static void find(Internal internal) throws ReflectiveOperationException {
        Class<?> type = Class.forName(internal.className(), false, CamelAndVertxInternals.class.getClassLoader());
        if (internal.member() == null) {
            return;
        }
        Class<?>[] parameters = new Class<?>[internal.parameterTypes().length];
        for (int i = 0; i < parameters.length; i++) {
            parameters[i] = parameterType(internal.parameterTypes()[i]);
        }
        if (internal.member().equals("<init>")) {
            Constructor<?> c = type.getDeclaredConstructor(parameters);
            if (c == null) {
                throw new NoSuchMethodException(internal.toString());
            }
            return;
        }
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(internal.member()) && Arrays.equals(m.getParameterTypes(), parameters)) {
                    return;
                }
            }
        }
        throw new NoSuchMethodException(internal.toString());
    }

    private static Class<?> parameterType(String name) throws ClassNotFoundException {
        return switch (name) {
            case "int" -> int.class;
            case "boolean" -> boolean.class;
            case "long" -> long.class;
            default -> Class.forName(name, false, CamelAndVertxInternals.class.getClassLoader());
        };
    }
}
