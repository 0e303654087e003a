package dev.metakit.inbox.bench;

import dev.metakit.inbox.signature.SignatureHeader;
import dev.metakit.inbox.signature.SignatureVerificationException;
import dev.metakit.inbox.signature.SignatureVerifier;
import dev.metakit.inbox.signature.VerifiedSignature;
import dev.metakit.inbox.support.TestSignatures;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Header parse + HMAC verification of a 400-byte body, the work done per webhook delivery.
 *
 * <p>Run from the repository root: {@code bench/jmh-signature.sh -f 1 -wi 3 -i 5 -t 1} (results: BENCHMARKS.md)
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class SignatureVerificationBenchmark {
    private static final long NOW = 1_764_670_530L;

    private SignatureVerifier rotating;
    private byte[] body;
    private String currentHeader;
    private String previousHeader;

    @Setup
    public void setUp() {
        Clock clock = Clock.fixed(Instant.ofEpochSecond(NOW), ZoneOffset.UTC);
        rotating = new SignatureVerifier(List.of("mk_bench_current", "mk_bench_previous"), Duration.ofMinutes(5),
                clock);
        String json = "{\"event\":\"position.closed\",\"account_id\":2,\"created_at\":\"2025-12-02T10:15:30Z\","
                + "\"data\":{\"ticket\":99302156,\"symbol\":\"EURUSD\",\"type\":\"buy\",\"volume\":0.10,"
                + "\"price_open\":1.08450,\"sl\":0,\"tp\":0,\"comment\":\"";
        char[] padding = new char[400 - json.length() - 3];
        Arrays.fill(padding, 'x');
        body = (json + new String(padding) + "\"}}").getBytes(StandardCharsets.US_ASCII);
        if (body.length != 400) {
            throw new IllegalStateException("body is " + body.length + " bytes");
        }
        currentHeader = TestSignatures.header("mk_bench_current", NOW, body);
        // rotation: MetaKit signs with the new secret and the old one; this consumer still has only the old as
        // "previous", so the first v1 misses and the second matches
        previousHeader = TestSignatures.header("mk_bench_new", "mk_bench_previous", NOW, body);
    }

    /** The common case: one v1, signed with the current secret (the verifier still holds two secrets). */
    @Benchmark
    public VerifiedSignature verify() throws SignatureVerificationException {
        return rotating.verify(currentHeader, body);
    }

    /** During a rotation: two v1, the second one matches the previous secret. */
    @Benchmark
    public VerifiedSignature verifyDuringRotation() throws SignatureVerificationException {
        return rotating.verify(previousHeader, body);
    }

    /** The parser alone, to see what share of {@link #verify()} is not HMAC. */
    @Benchmark
    public SignatureHeader parseOnly() throws SignatureVerificationException {
        return SignatureHeader.parse(currentHeader);
    }
}
