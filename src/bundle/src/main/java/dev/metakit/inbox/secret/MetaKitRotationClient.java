package dev.metakit.inbox.secret;

import dev.metakit.inbox.metakit.ApiRotation;
import dev.metakit.inbox.metakit.ApiWebhook;
import dev.metakit.inbox.metakit.MetaKitApiException;
import dev.metakit.inbox.metakit.MetaKitJson;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * The two MetaKit calls a rotation makes: {@code GET /v1/webhooks} (which webhook, when METAKIT_WEBHOOK_ID is unset)
 * and {@code POST /v1/webhooks/{id}/rotate}. The JDK's HTTP client rather than the bundle's {@code metakit-api-get}
 * route: the operators' command line rotates without a CamelContext, and one client means one behaviour for the
 * command line, the ops page and the schedule. Errors name the call and MetaKit's own error text, never the key or
 * a secret.
 */
public class MetaKitRotationClient {
    private final URI baseUrl;
    private final String apiKey;
    private final Duration readTimeout;
    private final HttpClient http;
    private final MetaKitJson json = new MetaKitJson();

    public MetaKitRotationClient(String baseUrl, String apiKey, Duration connectTimeout, Duration readTimeout) {
        this.baseUrl = URI.create(baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl);
        this.apiKey = apiKey;
        this.readTimeout = readTimeout;
        this.http = HttpClient.newBuilder().connectTimeout(connectTimeout).build();
    }

    public List<ApiWebhook> webhooks() throws IOException, InterruptedException {
        return json.webhooks(call("GET", "/v1/webhooks"));
    }

    /**
     * @throws MetaKitApiException MetaKit answered and refused (nothing rotated)
     * @throws IOException no answer (a timeout: MetaKit may or may not have rotated)
     */
    public ApiRotation rotate(String webhookId) throws IOException, InterruptedException {
        return json.rotation(call("POST", "/v1/webhooks/" + URLEncoder.encode(webhookId, StandardCharsets.UTF_8)
                + "/rotate"));
    }

    private byte[] call(String method, String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(readTimeout)
                .header("Authorization", "Bearer " + apiKey).header("Accept", "application/json")
                .method(method, HttpRequest.BodyPublishers.noBody()).build();
        HttpResponse<byte[]> response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
        int status = response.statusCode();
        if (status >= 200 && status < 300) {
            return response.body();
        }
        String reason = json.errorMessage(response.body()).orElse("no error message");
        throw new MetaKitApiException(status, null, "MetaKit answered " + status + " to " + method + " " + path
                + ": " + reason);
    }
}
