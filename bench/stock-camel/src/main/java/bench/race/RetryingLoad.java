package bench.race;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The sender side of bench/stock-camel-race.sh: MetaKit as it behaves when the consumer dies under load (not part of
 * the stock-Camel baseline itself; it only shares its jar).
 *
 * <p>Sends unique signed deliveries over C connections for a duration (while the script kill -9s and restarts the
 * consumer), remembers every delivery that got no 2xx (a status, a timeout, a refused connection), then re-sends
 * those byte-identical, as MetaKit's retries are, until each got a 2xx or the attempts run out. Finally checks over
 * JDBC which acknowledged deliveries are absent from the inbox table: each is a delivery lost for good, since
 * MetaKit stops retrying after a 2xx.
 *
 * <pre>
 * java -cp stock-camel.jar bench.race.RetryingLoad --url http://127.0.0.1:PORT/hooks/metakit --secret S
 *   --connections 32 --duration 30 --jdbc-url URL --db-user U --db-password P --inbox-table webhook_inbox
 * </pre>
 */
public final class RetryingLoad {

    private record Delivery(String key, String signature, byte[] body) {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            o.put(args[i].substring(2), args[i + 1]);
        }
        URI url = URI.create(o.get("url"));
        byte[] secret = o.get("secret").getBytes(StandardCharsets.UTF_8);
        int connections = Integer.parseInt(o.getOrDefault("connections", "32"));
        int duration = Integer.parseInt(o.getOrDefault("duration", "30"));
        int maxDeliveries = Integer.parseInt(o.getOrDefault("deliveries", "400000"));
        int retryRounds = Integer.parseInt(o.getOrDefault("retry-rounds", "20"));
        String table = o.getOrDefault("inbox-table", "webhook_inbox");

        Delivery[] all = presign(secret, maxDeliveries);
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();
        List<String> acked = Collections.synchronizedList(new ArrayList<>());
        ConcurrentLinkedQueue<Delivery> failed = new ConcurrentLinkedQueue<>();
        AtomicInteger next = new AtomicInteger();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(duration);
        System.out.printf("[race] sending for %d s over %d connections%n", duration, connections);
        ExecutorService pool = Executors.newFixedThreadPool(connections);
        for (int c = 0; c < connections; c++) {
            pool.execute(() -> {
                while (System.nanoTime() < end) {
                    int i = next.getAndIncrement();
                    if (i >= all.length) {
                        return;
                    }
                    if (send(client, url, all[i])) {
                        acked.add(all[i].key());
                    } else {
                        failed.add(all[i]);
                        pause(200); // a refused connection fails at once: do not burn through the deliveries
                    }
                }
            });
        }
        pool.shutdown();
        pool.awaitTermination(duration + 60L, TimeUnit.SECONDS);
        int sent = Math.min(next.get(), all.length);
        int failedFirst = failed.size();
        int ackedFirst = acked.size();
        System.out.printf("[race] first attempts: %d sent, %d acked, %d without 2xx%n", sent, ackedFirst, failedFirst);

        // MetaKit's retries: the same bytes again until a 2xx
        int round = 0;
        while (!failed.isEmpty() && round++ < retryRounds) {
            List<Delivery> again = new ArrayList<>(failed);
            failed.clear();
            ExecutorService retry = Executors.newFixedThreadPool(Math.min(connections, Math.max(1, again.size())));
            for (Delivery d : again) {
                retry.execute(() -> {
                    if (send(client, url, d)) {
                        acked.add(d.key());
                    } else {
                        failed.add(d);
                    }
                });
            }
            retry.shutdown();
            retry.awaitTermination(5, TimeUnit.MINUTES);
            if (!failed.isEmpty()) {
                pause(1000);
            }
        }
        System.out.printf("[race] after retries: %d acked in all, %d never acked%n", acked.size(), failed.size());

        List<String> missing = missing(o, table, acked);
        System.out.printf("[race] acked-but-missing from %s: %d%n", table, missing.size());
        for (String k : missing.subList(0, Math.min(5, missing.size()))) {
            System.out.println("[race]   lost: " + k);
        }
        System.out.printf("RESULT\tsent=%d\tacked_first=%d\tretried=%d\tnever_acked=%d\tacked_but_missing=%d%n",
                sent, ackedFirst, failedFirst, failed.size(), missing.size());
        System.exit(0);
    }

    private static boolean send(HttpClient client, URI url, Delivery d) {
        HttpRequest req = HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(5))
                .header("Content-Type", "application/json")
                .header("X-MetaKit-Event", "position.opened")
                .header("X-MetaKit-Signature", d.signature())
                .POST(HttpRequest.BodyPublishers.ofByteArray(d.body())).build();
        try {
            int status = client.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
            return status >= 200 && status < 300;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (Exception e) {
            return false;
        }
    }

    private static Delivery[] presign(byte[] secret, int n) throws Exception {
        long t = Instant.now().getEpochSecond();
        String created = Instant.ofEpochSecond(t).toString();
        long ticketBase = 200_000_000L + (System.nanoTime() & 0xffffffL) * 1000L;
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret, "HmacSHA256"));
        Delivery[] out = new Delivery[n];
        for (int i = 0; i < n; i++) {
            long ticket = ticketBase + i;
            int account = 1 + (i % 1000);
            String body = "{\"event\":\"position.opened\",\"account_id\":" + account + ",\"created_at\":\"" + created
                    + "\",\"data\":{\"ticket\":" + ticket + ",\"symbol\":\"EURUSD\",\"type\":\"buy\",\"volume\":0.10,"
                    + "\"price_open\":1.08450,\"sl\":1.08000,\"tp\":1.09500,\"position_id\":" + ticket + "}}";
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            mac.update((t + ".").getBytes(StandardCharsets.US_ASCII));
            String v1 = HexFormat.of().formatHex(mac.doFinal(bytes));
            out[i] = new Delivery(t + ":" + v1, "t=" + t + ",v1=" + v1, bytes);
        }
        return out;
    }

    private static List<String> missing(Map<String, String> o, String table, List<String> acked) throws Exception {
        List<String> missing = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(o.get("jdbc-url"), o.get("db-user"), o.get("db-password"));
             PreparedStatement ps = c.prepareStatement("select k from unnest(?::text[]) as k where not exists"
                     + " (select 1 from " + table + " i where i.delivery_key = k)")) {
            List<String> keys = new ArrayList<>(acked);
            for (int from = 0; from < keys.size(); from += 20_000) {
                Array arr = c.createArrayOf("text", keys.subList(from, Math.min(keys.size(), from + 20_000)).toArray());
                ps.setArray(1, arr);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        missing.add(rs.getString(1));
                    }
                }
            }
        }
        return missing;
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
