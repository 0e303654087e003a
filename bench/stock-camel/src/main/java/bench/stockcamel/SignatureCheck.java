package bench.stockcamel;

import org.apache.camel.Exchange;
import org.apache.camel.Processor;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * MetaKit's signature check as a plain Camel processor: {@code X-MetaKit-Signature: t=<unix s>,v1=<hex>[,v1=...]},
 * {@code v1 = hex(HMAC-SHA256(secret, "<t>." + raw body))}, t within 300 s of now. A genuine delivery gets the header
 * {@code MetaKitDeliveryKey = t:v1} (the dedupe key: retries are byte-identical); anything else is answered 401 and
 * the route stops.
 */
public class SignatureCheck implements Processor {

    private static final long TOLERANCE_SECONDS = 300;

    private byte[] secret;

    public void setSecret(String secret) {
        this.secret = secret.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void process(Exchange exchange) throws Exception {
        byte[] body = exchange.getMessage().getBody(byte[].class);
        String header = exchange.getMessage().getHeader("X-MetaKit-Signature", String.class);
        String key = body == null || header == null ? null : verify(header, body);
        if (key == null) {
            exchange.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 401);
            exchange.getMessage().setBody("invalid signature");
            exchange.setRouteStop(true);
            return;
        }
        exchange.getMessage().setBody(body);
        exchange.getMessage().setHeader("MetaKitDeliveryKey", key);
    }

    private String verify(String header, byte[] body) throws Exception {
        String t = null;
        for (String part : header.split(",")) {
            String p = part.trim();
            if (p.startsWith("t=")) {
                t = p.substring(2);
            }
        }
        if (t == null) {
            return null;
        }
        long ts;
        try {
            ts = Long.parseLong(t);
        } catch (NumberFormatException e) {
            return null;
        }
        if (Math.abs(System.currentTimeMillis() / 1000 - ts) > TOLERANCE_SECONDS) {
            return null;
        }
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret, "HmacSHA256"));
        mac.update((t + ".").getBytes(StandardCharsets.US_ASCII));
        byte[] expected = mac.doFinal(body);
        for (String part : header.split(",")) {
            String p = part.trim();
            if (p.startsWith("v1=")) {
                byte[] given;
                try {
                    given = HexFormat.of().parseHex(p.substring(3));
                } catch (IllegalArgumentException e) {
                    continue;
                }
                if (MessageDigest.isEqual(expected, given)) {
                    return t + ":" + p.substring(3).toLowerCase();
                }
            }
        }
        return null;
    }
}
