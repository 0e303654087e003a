package dev.metakit.inbox.sandbox;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import java.util.LinkedHashMap;
import java.util.Map;

/** The one ObjectMapper of the sandbox: BigDecimals are written plain (0.10, never 1.0E-1), parsed as BigDecimal with its scale kept. */
public final class SandboxJson {
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .setNodeFactory(JsonNodeFactory.withExactBigDecimals(true));

    private SandboxJson() {
    }

    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /**
     * A JSON object of the given names and values, in their order: {@code object("ticket", 1, "sl", null)}. A value
     * may be null (written as null). The map is a new one the caller may add to.
     */
    static Map<String, Object> object(Object... namesAndValues) {
        if (namesAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("names and values come in pairs");
        }
        Map<String, Object> json = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            json.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return json;
    }

    public static byte[] write(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise " + value.getClass().getSimpleName(), e);
        }
    }
}
