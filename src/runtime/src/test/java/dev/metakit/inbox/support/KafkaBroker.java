package dev.metakit.inbox.support;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;


/**
 * A real Kafka broker (KRaft, broker and controller in one node) in a JVM of its own, started from Kafka's Maven
 * artifacts: {@code src/test/kafka-broker/pom.xml} names them, and {@link MavenClasspath} resolves them once per
 * build folder. Its own JVM, because the broker's dependencies must not meet the bundle's (camel-kafka 4.18 brings
 * kafka-clients 3.9.1; this broker is 4.1.1, which takes 3.x clients). Fixed ports and log folder, so
 * {@link #kill()} then {@link #start()} is the same broker with the same topic contents.
 */
public final class KafkaBroker implements AutoCloseable {
    private final int port = RunningInbox.freePort();
    private final int controllerPort = RunningInbox.freePort();
    private final Path dir;
    private final Path config;
    private final Path log;
    private Process process;

    public KafkaBroker(Path dir) {
        this.dir = dir;
        this.config = dir.resolve("server.properties");
        this.log = MavenClasspath.buildDir().resolve("kafka-broker-" + port + ".log");
        String properties = String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
                "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs=" + dir.resolve("data"),
                "num.partitions=1",
                "offsets.topic.replication.factor=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
                "");
        try {
            Files.writeString(config, properties);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        run(List.of("kafka.tools.StorageTool", "format", "-t", Uuid.randomUuid().toString(), "-c", config.toString()),
                Duration.ofSeconds(60));
    }

    public String bootstrapServers() {
        return "127.0.0.1:" + port;
    }

    /** Starts the broker and waits until it answers for its cluster. */
    public KafkaBroker start() {
        process = launch(List.of("kafka.Kafka", config.toString()));
        ChildBoot.awaitReady(process, "the Kafka broker (Java " + ChildJvm.javaVersion() + ")", log,
                Duration.ofSeconds(120), Duration.ofMillis(250), () -> {
            try (Admin admin = admin()) {
                return admin.describeCluster().nodes().get(2, TimeUnit.SECONDS).size() == 1;
            } catch (Exception e) {
                return false;
            }
        });
        return this;
    }

    public void createTopic(String name, int partitions) throws Exception {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** SIGKILL: the broker is gone at once, as in a crash; its log folder stays for the next {@link #start()}. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    public Path log() {
        return log;
    }

    private Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3000));
    }

    private Process launch(List<String> mainAndArgs) {
        return ChildJvm.start(dir, log, MavenClasspath.of("kafka-broker"), mainAndArgs);
    }

    private void run(List<String> mainAndArgs, Duration timeout) {
        Process p = launch(mainAndArgs);
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException(mainAndArgs.get(0) + " failed; see " + log);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() throws InterruptedException {
        ChildJvm.stop(process);
    }
}
