package dev.metakit.inbox.ingest;

import dev.metakit.inbox.config.ConfigurationException;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;

import java.io.InputStream;

/**
 * The ingest route's first step: the webhook's body limit ({@code metakit.max-body-bytes}), kept by the route itself
 * whatever HTTP server carries it. A body the engine hands over as a stream is read no further than one byte past the
 * limit; one it has already buffered (Vert.x, within the server's own limit) is measured. The body is left on the
 * message as bytes, so the signature check reads it without another conversion.
 */
public class BodyLimit implements Processor {
    private long maxBytes = 1_048_576;

    @Override
    public void process(Exchange exchange) throws Exception {
        Message message = exchange.getMessage();
        byte[] body;
        if (message.getBody() instanceof InputStream in) {
            body = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBytes + 1));
        } else {
            body = message.getBody(byte[].class);
        }
        if (body != null && body.length > maxBytes) {
            throw new BodyTooLargeException(maxBytes);
        }
        message.setBody(body);
    }

    public void setMaxBytes(long maxBytes) {
        if (maxBytes <= 0) {
            throw new ConfigurationException("METAKIT_MAX_BODY_BYTES must be positive");
        }
        this.maxBytes = maxBytes;
    }
}
