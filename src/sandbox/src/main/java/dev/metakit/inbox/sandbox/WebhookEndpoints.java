package dev.metakit.inbox.sandbox;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/** The registered endpoints ({@code wh_1}, {@code wh_2}, …) and their rotations; new secrets come from the seed. */
public final class WebhookEndpoints {
    private final List<WebhookEndpoint> endpoints = new CopyOnWriteArrayList<>();
    private final Map<String, WebhookEndpoint> byId = new ConcurrentHashMap<>();
    private final List<Consumer<SecretRotation>> rotationListeners = new CopyOnWriteArrayList<>();
    private final Random secrets;
    private final Clock clock;
    private final Duration rotationWindow;

    public WebhookEndpoints(long seed, Clock clock, Duration rotationWindow) {
        this.secrets = new Random(seed ^ 0x5EC12E75L);
        this.clock = clock;
        this.rotationWindow = rotationWindow;
    }

    public synchronized WebhookEndpoint add(URI url, String secret) {
        WebhookEndpoint endpoint = new WebhookEndpoint("wh_" + (endpoints.size() + 1), url, secret, clock);
        endpoints.add(endpoint);
        byId.put(endpoint.id(), endpoint);
        return endpoint;
    }

    public List<WebhookEndpoint> all() {
        return List.copyOf(endpoints);
    }

    public Optional<WebhookEndpoint> find(String id) {
        return Optional.ofNullable(byId.get(id));
    }

    /** Told of every rotation, whether an operator asked for it over the API or the rotation fault fired. */
    public void onRotation(Consumer<SecretRotation> listener) {
        rotationListeners.add(listener);
    }

    /** Issues a new secret; the previous one is still signed with for the rotation window. */
    public SecretRotation rotate(String id) {
        WebhookEndpoint endpoint = find(id).orElseThrow(() -> new NoSuchElementException("no webhook " + id));
        SecretRotation rotation = endpoint.rotate(newSecret(), rotationWindow);
        rotationListeners.forEach(listener -> listener.accept(rotation));
        return rotation;
    }

    private String newSecret() {
        byte[] bytes = new byte[16];
        synchronized (secrets) {
            secrets.nextBytes(bytes);
        }
        return "whsec_" + HexFormat.of().formatHex(bytes);
    }
}
