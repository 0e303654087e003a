package dev.metakit.inbox.metakit;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The one place that knows MetaKit's JSON: every field's JSON name is written here once. Reads trees rather than
 * binding classes so that decimals are taken from the parser as {@link BigDecimal} (never through double), unknown
 * fields are ignored everywhere, and a bad body gives a short reason that never quotes it. Thread-safe.
 */
public class MetaKitJson {

    private static final int MAX_ERROR_MESSAGE = 300;

    private final ObjectMapper mapper = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
            // keep 1.08450 as 1.08450: the tree model would otherwise strip trailing zeros
            .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
            .build();

    // ---- webhook body

    public WebhookEvent webhookEvent(byte[] body) {
        return webhookEvent(tree(body));
    }

    public WebhookEvent webhookEvent(String body) {
        return webhookEvent(tree(body));
    }

    private WebhookEvent webhookEvent(JsonNode root) {
        if (!root.isObject()) {
            throw MalformedPayloadException.notObject("webhook body is not a JSON object");
        }
        JsonNode data = root.get("data");
        Long ticket = null;
        if (data != null && !data.isNull()) {
            if (!data.isObject()) {
                throw MalformedPayloadException.badField("data", "not an object");
            }
            ticket = ticket(data);
        }
        return new WebhookEvent(optText(root, "", "event"), optLong(root, "", "account_id"),
                optInstant(root, "", "created_at"), ticket);
    }

    /** The position the delivery is about: a defect of it is a {@link MalformedPayloadException.Defect#BAD_TICKET}. */
    private static Long ticket(JsonNode data) {
        try {
            return optLong(data, "data", "ticket");
        } catch (MalformedPayloadException e) {
            throw MalformedPayloadException.badTicket(e);
        }
    }

    // ---- REST responses

    public List<ApiPosition> positions(byte[] body) {
        return array(tree(body), "positions", this::position);
    }

    public List<ApiPosition> positions(String body) {
        return array(tree(body), "positions", this::position);
    }

    public List<ApiDeal> deals(byte[] body) {
        return array(tree(body), "deals", this::deal);
    }

    public List<ApiDeal> deals(String body) {
        return array(tree(body), "deals", this::deal);
    }

    public List<ApiWebhook> webhooks(byte[] body) {
        return array(tree(body), "webhooks", this::webhook);
    }

    public List<ApiWebhook> webhooks(String body) {
        return array(tree(body), "webhooks", this::webhook);
    }

    /**
     * The answer of {@code POST /v1/webhooks/{id}/rotate}: {@code {id, secret, previousSecretExpiresAt}}, the last
     * optional (when MetaKit stops signing with, and accepting, the previous secret).
     */
    public ApiRotation rotation(byte[] body) {
        JsonNode root = tree(body);
        if (!root.isObject()) {
            throw MalformedPayloadException.badField("rotation", "not an object");
        }
        String secret = optText(root, "", "secret");
        if (secret == null || secret.isBlank()) {
            throw MalformedPayloadException.badField("secret", "missing");
        }
        return new ApiRotation(optText(root, "", "id"), secret, optInstant(root, "", "previousSecretExpiresAt"));
    }

    /**
     * The message of an error body {@code {"error": "..."}}, shortened; empty when the body is absent, not JSON or
     * has no usable {@code error}. Never throws: it is called while handling a failure.
     */
    public Optional<String> errorMessage(byte[] body) {
        return body == null ? Optional.empty() : errorMessage(new String(body, StandardCharsets.UTF_8));
    }

    public Optional<String> errorMessage(String body) {
        if (body == null || body.isBlank()) {
            return Optional.empty();
        }
        try {
            JsonNode error = mapper.readTree(body).get("error");
            if (error == null || !error.isTextual() || error.asText().isBlank()) {
                return Optional.empty();
            }
            String message = error.asText().strip();
            return Optional.of(message.length() > MAX_ERROR_MESSAGE ? message.substring(0, MAX_ERROR_MESSAGE) + "…"
                    : message);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    // ---- field mapping: the JSON names live here

    private ApiPosition position(JsonNode n, String at) {
        return new ApiPosition(reqLong(n, at, "ticket"), optText(n, at, "symbol"), optText(n, at, "type"),
                optDecimal(n, at, "volume"), optDecimal(n, at, "price_open"), optDecimal(n, at, "sl"),
                optDecimal(n, at, "tp"), optDecimal(n, at, "profit"), optDecimal(n, at, "swap"),
                optInstant(n, at, "time"));
    }

    private ApiDeal deal(JsonNode n, String at) {
        String entry = optText(n, at, "entry");
        return new ApiDeal(reqLong(n, at, "ticket"), reqLong(n, at, "position_id"), optLong(n, at, "order"),
                optText(n, at, "symbol"), optText(n, at, "type"),
                entry == null ? null : entry.strip().toLowerCase(Locale.ROOT),
                optDecimal(n, at, "volume"), optDecimal(n, at, "price"), optDecimal(n, at, "profit"),
                optDecimal(n, at, "commission"), optDecimal(n, at, "swap"), optInstant(n, at, "time"));
    }

    private ApiWebhook webhook(JsonNode n, String at) {
        JsonNode idNode = present(n, "id");
        String id = idNode != null && idNode.isIntegralNumber() ? idNode.asText() : optText(n, at, "id");
        if (id == null) {
            throw MalformedPayloadException.badField(at + ".id", "missing");
        }
        return new ApiWebhook(id, optText(n, at, "url"), optText(n, at, "lastDeliveryStatus"),
                optInstant(n, at, "lastDeliveryAt"));
    }

    // ---- helpers

    private JsonNode tree(byte[] body) {
        if (body == null || body.length == 0) {
            throw MalformedPayloadException.notJson("empty body");
        }
        try {
            return checked(mapper.readTree(body));
        } catch (JsonProcessingException e) {
            throw notJson(e);
        } catch (IOException e) {
            throw MalformedPayloadException.notJson("unreadable body");
        }
    }

    private JsonNode tree(String body) {
        if (body == null || body.isEmpty()) {
            throw MalformedPayloadException.notJson("empty body");
        }
        try {
            return checked(mapper.readTree(body));
        } catch (JsonProcessingException e) {
            throw notJson(e);
        }
    }

    private static JsonNode checked(JsonNode root) {
        if (root == null || root.isMissingNode()) {
            throw MalformedPayloadException.notJson("empty body");
        }
        return root;
    }

    // Jackson's own message quotes the offending token: report only where it broke.
    private static MalformedPayloadException notJson(JsonProcessingException e) {
        JsonLocation where = e.getLocation();
        return MalformedPayloadException.notJson(where == null ? "not valid JSON"
                : "not valid JSON at line " + where.getLineNr() + ", column " + where.getColumnNr());
    }

    private static <T> List<T> array(JsonNode root, String what, Mapper<T> element) {
        if (!root.isArray()) {
            throw MalformedPayloadException.badField(what, "expected a JSON array");
        }
        List<T> out = new ArrayList<>(root.size());
        for (int i = 0; i < root.size(); i++) {
            JsonNode n = root.get(i);
            String at = what + "[" + i + "]";
            if (!n.isObject()) {
                throw MalformedPayloadException.badField(at, "not an object");
            }
            out.add(element.map(n, at));
        }
        return List.copyOf(out);
    }

    @FunctionalInterface
    private interface Mapper<T> {
        T map(JsonNode node, String at);
    }

    private static JsonNode present(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? null : v;
    }

    private static String name(String at, String field) {
        return at.isEmpty() ? field : at + "." + field;
    }

    private static String optText(JsonNode n, String at, String field) {
        JsonNode v = present(n, field);
        if (v == null) {
            return null;
        }
        if (!v.isTextual()) {
            throw MalformedPayloadException.badField(name(at, field), "not a string");
        }
        return v.asText();
    }

    private static long reqLong(JsonNode n, String at, String field) {
        Long v = optLong(n, at, field);
        if (v == null) {
            throw MalformedPayloadException.badField(name(at, field), "missing");
        }
        return v;
    }

    /** An integer, or a string of digits (ids are sometimes sent quoted). */
    private static Long optLong(JsonNode n, String at, String field) {
        JsonNode v = present(n, field);
        if (v == null) {
            return null;
        }
        BigDecimal d = decimal(v, name(at, field));
        try {
            return d.longValueExact();
        } catch (ArithmeticException e) {
            throw MalformedPayloadException.badField(name(at, field), "not an integer");
        }
    }

    private static BigDecimal optDecimal(JsonNode n, String at, String field) {
        JsonNode v = present(n, field);
        return v == null ? null : decimal(v, name(at, field));
    }

    // Numbers arrive as BigDecimal (USE_BIG_DECIMAL_FOR_FLOATS) or integer nodes: both convert exactly.
    private static BigDecimal decimal(JsonNode v, String name) {
        if (v.isNumber()) {
            if (v.isFloat() || v.isDouble()) {
                throw MalformedPayloadException.badField(name, "binary floating point");
            }
            return v.decimalValue();
        }
        if (v.isTextual()) {
            try {
                return new BigDecimal(v.asText().strip());
            } catch (NumberFormatException e) {
                throw MalformedPayloadException.badField(name, "not a number");
            }
        }
        throw MalformedPayloadException.badField(name, "not a number");
    }

    private static Instant optInstant(JsonNode n, String at, String field) {
        String text = optText(n, at, field);
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            return OffsetDateTime.parse(text.strip()).toInstant();
        } catch (DateTimeParseException e) {
            throw MalformedPayloadException.badField(name(at, field), "not an ISO-8601 time");
        }
    }
}
