package dev.metakit.inbox.frontdoor;

import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpMessage;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.impl.VertxHttpRequestDecoder;

/**
 * Vert.x's request decoder, except that a request with both {@code Transfer-Encoding: chunked} and
 * {@code Content-Length} is a bad request. Netty drops the Content-Length and reads the chunks (RFC 9112 6.1
 * allows that only if the connection is closed after the answer); a proxy in front that trusts the Content-Length
 * would see another request boundary than we do, which is request smuggling. Marked as a decoding failure, the
 * request gets Vert.x's own answer to an invalid request: 400, then the connection is closed.
 */
final class StrictRequestDecoder extends VertxHttpRequestDecoder {
    private static final IllegalArgumentException BOTH_LENGTHS =
            new IllegalArgumentException("Content-Length together with Transfer-Encoding: chunked");

    StrictRequestDecoder(HttpServerOptions options) {
        super(options);
    }

    @Override
    protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
        super.handleTransferEncodingChunkedWithContentLength(message);
        message.setDecoderResult(DecoderResult.failure(BOTH_LENGTHS));
    }
}
