package dev.metakit.example.quarkus;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/** The Quarkus host's HTTP server as MetaKit and a probe see it: a signed delivery, a GET. */
final class HostHttp {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private HostHttp() {
    }

    /** A delivery signed as MetaKit signs it ({@code t=..,v1=} HMAC-SHA256 of {@code "t." + body}), with the test's secret. */
    static HttpResponse<String> postSigned(String event, String json) throws Exception {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        long t = System.currentTimeMillis() / 1000;
        return HTTP.send(HttpRequest.newBuilder(uri("/hooks/metakit"))
                .header("Content-Type", "application/json")
                .header("X-MetaKit-Event", event)
                .header("X-MetaKit-Signature", "t=" + t + ",v1=" + hmac(BundleUnderTest.SECRET, t, body))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(uri(path)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static URI uri(String path) {
        return URI.create("http://127.0.0.1:" + BundleUnderTest.PORT + path);
    }

    private static String hmac(String secret, long t, byte[] body) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        mac.update((t + ".").getBytes(StandardCharsets.US_ASCII));
        return HexFormat.of().formatHex(mac.doFinal(body));
    }
}
