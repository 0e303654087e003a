package dev.metakit.inbox.sandbox;

import java.io.IOException;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * The sandbox on its own, like {@code stripe trigger}: {@code send} posts one signed event to any URL, {@code run}
 * runs the whole MetaKit side (API, trading, sender) against any consumer.
 */
public final class SandboxCli {
    static final String USAGE = """
            Usage: java -cp target/metakit-inbox.jar dev.metakit.inbox.sandbox.SandboxCli <command> [options]

              send  --url URL --secret S --event NAME [--account 1] [--ticket 99302156] [--retries]
                    Sends one correctly signed MetaKit event (any name: position.opened, position.modified,
                    position.closed, account.connected, webhook.test, ...) and prints the status code.
                    One attempt, or MetaKit's full schedule (5 attempts, 0.5/1/2/4 s apart) with --retries.
                    Exit 0 on a 2xx answer, else 1.

              run   --url URL --secret S [--api-port 8090] [--api-key sandbox-api-key] [--seed 42]
                    [--accounts 3] [--rate 5] [--faults none|moderate|heavy] [--operations N] [--linger S]
                    Runs the MetaKit sandbox against the consumer at URL: the REST API on 127.0.0.1:<api-port>,
                    trades at <rate> operations/s, deliveries with the chosen faults. A progress line every 5 s.
                    With --operations it stops after N operations once every delivery has settled; else Ctrl-C.
                    With --linger the REST API keeps answering S seconds more after that (the consumer's backlog).

              --help  this text
            """;
    private static final Set<String> SEND_OPTIONS = Set.of("url", "secret", "event", "account", "ticket", "retries");
    private static final Set<String> RUN_OPTIONS = Set.of("url", "secret", "api-port", "api-key", "seed", "accounts",
            "rate", "faults", "operations", "linger");
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);
    private static final Set<String> FLAGS = Set.of("retries", "help");

    private SandboxCli() {
    }

    public static void main(String[] args) throws Exception {
        int code = run(args, System.out, System.err);
        if (code != 0 || (args.length > 0 && "send".equals(args[0]))) {
            System.exit(code);
        }
    }

    /** Runs a command; returns the exit code (0 ok, 1 delivery not acknowledged, 2 bad arguments). */
    static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        if (args.length == 0 || List.of(args).contains("--help") || List.of(args).contains("-h")) {
            (args.length == 0 ? err : out).print(USAGE);
            return args.length == 0 ? 2 : 0;
        }
        try {
            return switch (args[0]) {
                case "send" -> send(parse(args, SEND_OPTIONS), out);
                case "run" -> runSandbox(parse(args, RUN_OPTIONS), out);
                default -> throw new IllegalArgumentException("unknown command '" + args[0] + "': send or run");
            };
        } catch (IllegalArgumentException e) {
            err.println("sandbox: " + e.getMessage() + " (see --help)");
            return 2;
        } catch (IOException e) {
            err.println("sandbox: cannot start the API: " + e.getMessage() + " (is --api-port free?)");
            return 1;
        }
    }

    private static int send(Options options, PrintStream out) throws InterruptedException {
        URI url = options.url();
        String secret = options.required("secret");
        String event = options.required("event");
        long account = options.longValue("account", 1);
        long ticket = options.longValue("ticket", 99_302_156L);
        DeliverySchedule schedule = options.flag("retries")
                ? DeliverySchedule.contract() : DeliverySchedule.contract().singleAttempt();
        Clock clock = Clock.systemUTC();
        WebhookEndpoints endpoints = new WebhookEndpoints(0, clock, Duration.ZERO);
        endpoints.add(url, secret);
        try (WebhookSender sender = new WebhookSender(endpoints, schedule, SandboxFaults.none(), 0, clock)) {
            Delivery delivery = sender.sendAndWait(singleEvent(event, account, ticket, clock.instant()),
                    Duration.ofSeconds(60));
            out.println("POST " + url + "  " + WebhookSender.EVENT_HEADER + ": " + event);
            out.println(WebhookSender.SIGNATURE_HEADER + ": " + delivery.signatureHeader());
            out.println(delivery.bodyText());
            for (DeliveryAttempt attempt : delivery.attempts()) {
                out.println("attempt " + attempt.attempt() + ": "
                        + (attempt.status() == 0 ? "no answer (" + attempt.error() + ")" : attempt.status()));
            }
            DeliveryAttempt last = delivery.attempts().isEmpty() ? null
                    : delivery.attempts().get(delivery.attempts().size() - 1);
            out.println(last == null ? "000" : String.valueOf(last.status()));
            return delivery.acknowledged() ? 0 : 1;
        }
    }

    /** A position event carries the contract's example position (with the given ticket); any other event no data. */
    static SandboxEvent singleEvent(String event, long account, long ticket, Instant now) {
        Map<String, Object> data = new LinkedHashMap<>();
        if (event.startsWith("position.")) {
            data.put("ticket", ticket);
            data.put("symbol", "EURUSD");
            data.put("type", "buy");
            data.put("volume", new BigDecimal("0.10"));
            data.put("price_open", new BigDecimal("1.08450"));
            data.put("sl", BigDecimal.ZERO);
            data.put("tp", BigDecimal.ZERO);
        }
        return new SandboxEvent(event, account, now.truncatedTo(ChronoUnit.SECONDS), data);
    }

    private static int runSandbox(Options options, PrintStream out) throws IOException, InterruptedException {
        SandboxSettings settings = SandboxSettings.builder()
                .webhookUrl(options.url())
                .webhookSecret(options.required("secret"))
                .apiPort((int) options.longValue("api-port", 8090))
                .apiKey(options.value("api-key", SandboxSettings.DEFAULT_API_KEY))
                .seed(options.longValue("seed", 42))
                .accounts((int) options.longValue("accounts", 3))
                .operationsPerSecond(options.doubleValue("rate", 5))
                .faults(SandboxFaults.named(options.value("faults", "moderate")))
                .operations(options.longValue("operations", 0))
                .build();
        if (settings.operationsPerSecond() <= 0) {
            throw new IllegalArgumentException("--rate must be positive");
        }
        Sandbox sandbox = new Sandbox(settings);
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            sandbox.close();
            stopped.countDown();
        }, "metakit-sandbox-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        sandbox.onRotation(r -> out.println("sandbox: rotated " + r.webhookId() + ": new secret " + r.secret()
                + ", previous " + r.previousSecret() + " still signed until " + r.previousSignedUntil()));
        out.println("sandbox: MetaKit API at " + sandbox.apiBaseUrl() + " (Authorization: Bearer "
                + settings.apiKey() + "), accounts 1.." + settings.accounts());
        out.println("sandbox: delivering to " + settings.webhookUrl() + " as " + sandbox.webhook().id()
                + ", seed " + settings.seed() + ", " + settings.operationsPerSecond() + " operations/s, faults "
                + options.value("faults", "moderate"));
        sandbox.start();
        try {
            long nextLine = System.nanoTime() + PROGRESS_EVERY.toNanos();
            while (!stopped.await(250, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                if (sandbox.trafficDone() && sandbox.sender().inFlight() == 0) {
                    long linger = options.longValue("linger", 0);
                    if (linger > 0) {
                        out.println("sandbox: traffic done; the API answers " + linger + " s more");
                        stopped.await(linger, java.util.concurrent.TimeUnit.SECONDS);
                    }
                    break;
                }
                if (System.nanoTime() >= nextLine) {
                    out.println(sandbox.progressLine());
                    nextLine += PROGRESS_EVERY.toNanos();
                }
            }
        } finally {
            if (stopped.getCount() > 0) {
                Runtime.getRuntime().removeShutdownHook(hook);
                sandbox.close();
            }
        }
        out.println(sandbox.progressLine());
        return 0;
    }

    private static Options parse(String[] args, Set<String> allowed) {
        Map<String, String> values = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + arg + "'");
            }
            String name = arg.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (!allowed.contains(name)) {
                throw new IllegalArgumentException("unknown option --" + name + " for " + args[0]);
            }
            if (FLAGS.contains(name)) {
                values.put(name, "true");
                continue;
            }
            if (value == null) {
                if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
                    throw new IllegalArgumentException("--" + name + " needs a value");
                }
                value = args[++i];
            }
            values.put(name, value);
        }
        return new Options(values);
    }

    private record Options(Map<String, String> values) {
        String required(String name) {
            String value = values.get(name);
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException("--" + name + " is required");
            }
            return value;
        }

        String value(String name, String fallback) {
            return values.getOrDefault(name, fallback);
        }

        boolean flag(String name) {
            return values.containsKey(name);
        }

        URI url() {
            String raw = required("url");
            try {
                URI uri = URI.create(raw);
                if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
                    throw new IllegalArgumentException("x");
                }
                return uri;
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--url must be an http(s) URL, was '" + raw + "'");
            }
        }

        long longValue(String name, long fallback) {
            return value(name, fallback, Long::parseLong, "a whole number");
        }

        double doubleValue(String name, double fallback) {
            return value(name, fallback, Double::parseDouble, "a number");
        }

        private <T> T value(String name, T fallback, java.util.function.Function<String, T> parse, String what) {
            String value = values.get(name);
            try {
                return value == null ? fallback : parse.apply(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--" + name + " must be " + what + ", was '" + value + "'");
            }
        }
    }
}
