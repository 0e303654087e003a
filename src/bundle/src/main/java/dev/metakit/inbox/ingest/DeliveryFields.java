package dev.metakit.inbox.ingest;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;

/**
 * Reads the two top-level fields the inbox indexes ({@code event}, {@code account_id}) with a streaming parser,
 * cheaply enough for the ack path. Never throws: a body that is not JSON, or not the expected shape, yields nulls
 * and is stored as it is for the worker to flag.
 */
public final class DeliveryFields {
    private static final JsonFactory JSON = new JsonFactory();

    public record Fields(String event, Long accountId) {
    }

    private DeliveryFields() {
    }

    public static Fields read(byte[] body) {
        String event = null;
        Long accountId = null;
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return new Fields(null, null);
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if ("event".equals(name) && value == JsonToken.VALUE_STRING) {
                    event = p.getText();
                } else if ("account_id".equals(name) && value == JsonToken.VALUE_NUMBER_INT
                        && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
                    accountId = p.getLongValue();
                } else {
                    p.skipChildren();
                }
                if (event != null && accountId != null) {
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not JSON, or cut short: keep whatever was read before the damage
        }
        return new Fields(event, accountId);
    }
}
