package dev.metakit.inbox.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;


/**
 * A Kafka Connect worker (standalone mode, {@code ConnectStandalone}) with Debezium's PostgreSQL connector, in a JVM
 * of its own, started from Maven artifacts: {@code src/runtime/src/test/kafka-connect/pom.xml} names them (Debezium 3.6.1.Final
 * on Kafka Connect 4.3.0), {@code mvn dependency:build-classpath} on it gives the classpath. The worker's offsets
 * are a file in {@code dir}; its REST port listens on 127.0.0.1 only.
 */
public final class KafkaConnect implements AutoCloseable {
    private final int restPort = RunningInbox.freePort();
    private final Path dir;
    private final Path log;
    private final String connectorName;
    private final Path workerConfig;
    private final Path connectorConfig;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private Process process;

    /** @param connector the connector's properties, as a platform's Kafka Connect would be given them */
    public KafkaConnect(Path dir, String bootstrapServers, Properties connector) {
        this.dir = dir;
        this.log = MavenClasspath.buildDir().resolve("kafka-connect-" + restPort + ".log");
        this.connectorName = connector.getProperty("name");
        this.workerConfig = dir.resolve("worker.properties");
        this.connectorConfig = dir.resolve("connector.properties");
        Properties worker = new Properties();
        worker.setProperty("bootstrap.servers", bootstrapServers);
        worker.setProperty("listeners", "http://127.0.0.1:" + restPort);
        worker.setProperty("offset.storage.file.filename", dir.resolve("offsets").toString());
        worker.setProperty("offset.flush.interval.ms", "1000");
        // the plugins on the classpath declare themselves (ServiceLoader manifests): no 20 s reflective scan
        worker.setProperty("plugin.discovery", "service_load");
        // the connector's own converters win; these are the worker's defaults, required in the file
        worker.setProperty("key.converter", "org.apache.kafka.connect.json.JsonConverter");
        worker.setProperty("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        write(workerConfig, worker);
        write(connectorConfig, connector);
    }

    /** Starts the worker and waits until the connector's task runs. */
    public KafkaConnect start() {
        process = ChildJvm.start(dir, log, MavenClasspath.of("kafka-connect"), List.of(
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info", "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "org.apache.kafka.connect.cli.ConnectStandalone", workerConfig.toString(), connectorConfig.toString()));
        ChildBoot.awaitReady(process, "Kafka Connect (Java " + ChildJvm.javaVersion() + ")", log,
                Duration.ofSeconds(180), Duration.ofMillis(500), () -> {
            String status = status();
            if (status.contains("\"FAILED\"")) {
                throw new IllegalStateException("the connector failed: " + status + "; see " + log);
            }
            return status.matches("(?s).*\"tasks\":\\[\\{[^]]*\"state\":\"RUNNING\".*");
        });
        return this;
    }

    /** The connector's status from the worker's REST API (empty while the worker does not answer yet). */
    public String status() {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restPort
                    + "/connectors/" + connectorName + "/status")).timeout(Duration.ofSeconds(3)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : "";
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    public Path log() {
        return log;
    }

    private static void write(Path file, Properties p) {
        try (Writer w = Files.newBufferedWriter(file)) {
            p.store(w, null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws InterruptedException {
        ChildJvm.stop(process);
    }
}
