package dev.metakit.inbox.signature;

import dev.metakit.inbox.signature.SignatureVerificationException.Reason;
import dev.metakit.inbox.support.TestSignatures;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class SignatureVerifierTest {
    private static final String CURRENT = "mk_current_5f2c9e1a7b";
    private static final String PREVIOUS = "mk_previous_0d4b8a3c6e";
    private static final String UNKNOWN = "mk_unknown_9a9a9a9a9a";
    private static final long NOW = 1_764_670_530L; // 2025-12-02T10:15:30Z
    private static final Duration TOLERANCE = Duration.ofSeconds(300);
    private static final Clock CLOCK = Clock.fixed(Instant.ofEpochSecond(NOW), ZoneOffset.UTC);
    private static final byte[] BODY = """
            {"event":"position.closed","account_id":2,"created_at":"2025-12-02T10:15:30Z",\
            "data":{"ticket":99302156,"symbol":"EURUSD","type":"buy","volume":0.10}}""".getBytes(StandardCharsets.UTF_8);

    private final SignatureVerifier rotating = new SignatureVerifier(List.of(CURRENT, PREVIOUS), TOLERANCE, CLOCK);
    private final SignatureVerifier currentOnly = new SignatureVerifier(List.of(CURRENT), TOLERANCE, CLOCK);

    private static String v1(String secret, long t, byte[] body) {
        return TestSignatures.v1(secret, t, body);
    }

    private static Reason reasonOf(ThrowingCallable call) {
        SignatureVerificationException e = catchThrowableOfType(SignatureVerificationException.class, call);
        assertThat(e).as("a SignatureVerificationException").isNotNull();
        return e.reason();
    }

    @Nested
    class Accepts {
        @Test
        void aHeaderSignedWithTheCurrentSecret() throws Exception {
            String header = TestSignatures.header(CURRENT, NOW, BODY);

            VerifiedSignature verified = currentOnly.verify(header, BODY);

            assertThat(verified.timestamp()).isEqualTo(NOW);
            assertThat(verified.v1()).isEqualTo(v1(CURRENT, NOW, BODY));
            assertThat(verified.deliveryKey()).isEqualTo(NOW + ":" + v1(CURRENT, NOW, BODY));
        }

        @Test
        void aKnownVectorComputedOutsideTheJvm() throws Exception {
            // Computed once, independently of this code and of TestSignatures:
            //   printf '%s' '1764670530.{"event":"webhook.test","account_id":2}' \
            //     | openssl dgst -sha256 -hmac 'mk_known_vector_secret'
            // (python3: hmac.new(b"mk_known_vector_secret", b"1764670530." + body, hashlib.sha256).hexdigest()
            // gives the same value)
            byte[] body = "{\"event\":\"webhook.test\",\"account_id\":2}".getBytes(StandardCharsets.US_ASCII);
            String expected = "ee329c2a5af05db39af3a0384d6fe379622087a522dda91d3ed5c57e8e31d087";
            SignatureVerifier verifier =
                    new SignatureVerifier(List.of("mk_known_vector_secret"), TOLERANCE, CLOCK);

            VerifiedSignature verified = verifier.verify("t=1764670530,v1=" + expected, body);

            assertThat(verified.deliveryKey()).isEqualTo("1764670530:" + expected);
        }

        @Test
        void uppercaseOrMixedCaseHexAndKeysOnTheLowerCaseDigest() throws Exception {
            String lower = v1(CURRENT, NOW, BODY);
            String mixed = lower.substring(0, 32).toUpperCase() + lower.substring(32);

            VerifiedSignature upper = currentOnly.verify("t=" + NOW + ",v1=" + lower.toUpperCase(), BODY);
            VerifiedSignature half = currentOnly.verify("t=" + NOW + ",v1=" + mixed, BODY);

            assertThat(upper.v1()).isEqualTo(lower);
            assertThat(upper.deliveryKey()).isEqualTo(NOW + ":" + lower);
            assertThat(half.deliveryKey()).isEqualTo(upper.deliveryKey());
        }

        @Test
        void whenOnlyTheSecondV1MatchesAndKeysOnTheOneThatVerified() throws Exception {
            String wrong = v1(UNKNOWN, NOW, BODY);
            String right = v1(CURRENT, NOW, BODY);

            VerifiedSignature verified = currentOnly.verify("t=" + NOW + ",v1=" + wrong + ",v1=" + right, BODY);

            assertThat(verified.v1()).isEqualTo(right);
        }

        @Test
        void aHeaderSignedWithThePreviousSecretWhileThePreviousSecretIsConfigured() throws Exception {
            VerifiedSignature verified = rotating.verify(TestSignatures.header(PREVIOUS, NOW, BODY), BODY);

            assertThat(verified.v1()).isEqualTo(v1(PREVIOUS, NOW, BODY));
        }

        @Test
        void aHeaderSignedWithBothSecretsAndKeysOnTheFirstV1() throws Exception {
            String header = TestSignatures.header(PREVIOUS, CURRENT, NOW, BODY);

            assertThat(rotating.verify(header, BODY).v1()).isEqualTo(v1(PREVIOUS, NOW, BODY));
            assertThat(currentOnly.verify(header, BODY).v1()).isEqualTo(v1(CURRENT, NOW, BODY));
        }

        @Test
        void andIgnoresUnknownSchemes() throws Exception {
            String v1 = v1(CURRENT, NOW, BODY);
            String header = "v0=" + v1(CURRENT, NOW, BODY) + ", t=" + NOW + " ,v2=whatever=at:all , v1=" + v1
                    + ",x-future=";

            assertThat(currentOnly.verify(header, BODY).v1()).isEqualTo(v1);
        }

        @Test
        void aTimestampExactlyToleranceSecondsInThePast() throws Exception {
            long t = NOW - 300;

            assertThat(currentOnly.verify(TestSignatures.header(CURRENT, t, BODY), BODY).timestamp()).isEqualTo(t);
        }

        @Test
        void aTimestampExactlyToleranceSecondsInTheFuture() throws Exception {
            long t = NOW + 300;

            assertThat(currentOnly.verify(TestSignatures.header(CURRENT, t, BODY), BODY).timestamp()).isEqualTo(t);
        }

        @Test
        void aBodyThatIsNotUtf8ByVerifyingTheRawBytes() throws Exception {
            byte[] body = {'{', (byte) 0xC3, (byte) 0x28, (byte) 0xFF, (byte) 0x80, 0, '}'};
            String header = TestSignatures.header(CURRENT, NOW, body);

            assertThat(currentOnly.verify(header, body).v1()).isEqualTo(v1(CURRENT, NOW, body));
            // what a decode/re-encode round trip would produce must not verify
            byte[] reencoded = new String(body, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
            assertThat(reasonOf(() -> currentOnly.verify(header, reencoded))).isEqualTo(Reason.SIGNATURE_MISMATCH);
        }

        @Test
        void anEmptyBody() throws Exception {
            byte[] empty = new byte[0];

            assertThat(currentOnly.verify(TestSignatures.header(CURRENT, NOW, empty), empty).timestamp())
                    .isEqualTo(NOW);
        }

        @Test
        void withASubSecondClockByComparingWholeSeconds() throws Exception {
            Clock late = Clock.fixed(Instant.ofEpochSecond(NOW, 999_000_000), ZoneOffset.UTC);
            SignatureVerifier verifier = new SignatureVerifier(List.of(CURRENT), TOLERANCE, late);
            long t = NOW - 300;

            assertThat(verifier.verify(TestSignatures.header(CURRENT, t, BODY), BODY).timestamp()).isEqualTo(t);
        }
    }

    @Nested
    class Rejects {
        @Test
        void aHeaderSignedWithThePreviousSecretOnceOnlyTheCurrentIsConfigured() {
            String header = TestSignatures.header(PREVIOUS, NOW, BODY);

            assertThat(reasonOf(() -> currentOnly.verify(header, BODY))).isEqualTo(Reason.SIGNATURE_MISMATCH);
        }

        @Test
        void aHeaderSignedWithAnUnknownSecret() {
            String header = TestSignatures.header(UNKNOWN, NOW, BODY);

            assertThat(reasonOf(() -> rotating.verify(header, BODY))).isEqualTo(Reason.SIGNATURE_MISMATCH);
        }

        @ParameterizedTest
        @NullAndEmptySource
        @ValueSource(strings = {" ", "\t", "  \t "})
        void aMissingOrBlankHeaderAsMissing(String header) {
            assertThat(reasonOf(() -> currentOnly.verify(header, BODY))).isEqualTo(Reason.MISSING_HEADER);
        }

        @ParameterizedTest(name = "[{index}] {0}")
        @MethodSource("dev.metakit.inbox.signature.SignatureVerifierTest#malformedHeaders")
        void aMalformedHeaderAsMalformed(String why, String header) {
            assertThat(reasonOf(() -> currentOnly.verify(header, BODY))).isEqualTo(Reason.MALFORMED_HEADER);
        }

        @Test
        void aTimestampOneSecondOlderThanTheTolerance() {
            String header = TestSignatures.header(CURRENT, NOW - 301, BODY);

            assertThat(reasonOf(() -> currentOnly.verify(header, BODY)))
                    .isEqualTo(Reason.TIMESTAMP_OUTSIDE_TOLERANCE);
        }

        @Test
        void aTimestampOneSecondFurtherInTheFutureThanTheTolerance() {
            String header = TestSignatures.header(CURRENT, NOW + 301, BODY);

            assertThat(reasonOf(() -> currentOnly.verify(header, BODY)))
                    .isEqualTo(Reason.TIMESTAMP_OUTSIDE_TOLERANCE);
        }

        @Test
        void aHugeTimestampAsOutsideToleranceWithoutOverflow() {
            long t = 999_999_999_999_999_999L;
            String header = "t=" + t + ",v1=" + v1(CURRENT, t, BODY);

            assertThat(reasonOf(() -> currentOnly.verify(header, BODY)))
                    .isEqualTo(Reason.TIMESTAMP_OUTSIDE_TOLERANCE);
        }

        @Test
        void aStaleTimestampBeforeLookingAtTheSignature() {
            String header = "t=" + (NOW - 301) + ",v1=" + "0".repeat(64);

            assertThat(reasonOf(() -> currentOnly.verify(header, BODY)))
                    .isEqualTo(Reason.TIMESTAMP_OUTSIDE_TOLERANCE);
        }

        @Test
        void aMalformedHeaderBeforeLookingAtTheTimestamp() {
            String header = "t=" + (NOW - 10_000) + ",v1=" + "0".repeat(63);

            assertThat(reasonOf(() -> currentOnly.verify(header, BODY))).isEqualTo(Reason.MALFORMED_HEADER);
        }

        @Test
        void aBodyWithOneByteChanged() {
            String header = TestSignatures.header(CURRENT, NOW, BODY);
            byte[] tampered = BODY.clone();
            tampered[tampered.length / 2] ^= 0x01;

            assertThat(reasonOf(() -> currentOnly.verify(header, tampered))).isEqualTo(Reason.SIGNATURE_MISMATCH);
        }

        @Test
        void aBodyWithOneByteAppended() {
            String header = TestSignatures.header(CURRENT, NOW, BODY);
            byte[] longer = Arrays.copyOf(BODY, BODY.length + 1);
            longer[BODY.length] = '\n';

            assertThat(reasonOf(() -> currentOnly.verify(header, longer))).isEqualTo(Reason.SIGNATURE_MISMATCH);
        }

        @Test
        void aSignatureMadeForAnotherTimestamp() {
            String header = "t=" + NOW + ",v1=" + v1(CURRENT, NOW - 1, BODY);

            assertThat(reasonOf(() -> currentOnly.verify(header, BODY))).isEqualTo(Reason.SIGNATURE_MISMATCH);
        }

        @Test
        void aValidSignatureOnlyCarriedUnderAnUnknownScheme() {
            String header = "t=" + NOW + ",v2=" + v1(CURRENT, NOW, BODY) + ",v1=" + "a".repeat(64);

            assertThat(reasonOf(() -> currentOnly.verify(header, BODY))).isEqualTo(Reason.SIGNATURE_MISMATCH);
        }
    }

    @Nested
    class NeverRevealsASecret {
        @ParameterizedTest(name = "[{index}] {0}")
        @MethodSource("dev.metakit.inbox.signature.SignatureVerifierTest#everyRejection")
        void inTheMessageOfAnyRejection(String why, String header, byte[] body) {
            SignatureVerificationException e = catchThrowableOfType(SignatureVerificationException.class,
                    () -> rotating.verify(header, body));

            assertThat(e).isNotNull();
            assertThat(e.getMessage()).startsWith(e.reason().text())
                    .doesNotContain(CURRENT).doesNotContain(PREVIOUS)
                    .doesNotContain(new String(BODY, StandardCharsets.UTF_8));
            assertThat(e.toString()).doesNotContain(CURRENT).doesNotContain(PREVIOUS);
            assertThat(e.getStackTrace()).as("stack trace filling is disabled").isEmpty();
        }

        @Test
        void whenItIsConfiguredWithoutAUsableSecret() {
            assertThatThrownBy(() -> new SignatureVerifier(Arrays.asList(null, "", "  \t"), TOLERANCE, CLOCK))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("at least one non-blank webhook secret is required");
            assertThatThrownBy(() -> new SignatureVerifier(List.of(), TOLERANCE, CLOCK))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> new SignatureVerifier(null, TOLERANCE, CLOCK))
                    .isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void whenTheToleranceIsNegative() {
            assertThatThrownBy(() -> new SignatureVerifier(List.of(CURRENT), Duration.ofSeconds(-1), CLOCK))
                    .isInstanceOf(IllegalArgumentException.class)
                    .message().doesNotContain(CURRENT);
        }
    }

    @Test
    void blankAndNullSecretsAreIgnoredNextToAUsableOne() throws Exception {
        SignatureVerifier verifier = new SignatureVerifier(Arrays.asList(" ", null, CURRENT), TOLERANCE, CLOCK);

        assertThat(verifier.verify(TestSignatures.header(CURRENT, NOW, BODY), BODY).timestamp()).isEqualTo(NOW);
    }

    @Test
    void everyReasonHasItsPublicTextAndMetricTag() {
        assertThat(Reason.values()).extracting(Reason::text, Reason::metricTag).containsExactly(
                org.assertj.core.groups.Tuple.tuple("missing signature header", "missing_header"),
                org.assertj.core.groups.Tuple.tuple("malformed signature header", "malformed_header"),
                org.assertj.core.groups.Tuple.tuple("timestamp outside tolerance", "timestamp_outside_tolerance"),
                org.assertj.core.groups.Tuple.tuple("signature mismatch", "signature_mismatch"),
                org.assertj.core.groups.Tuple.tuple("repeated signature or event header", "repeated_header"));
    }

    static Stream<Arguments> malformedHeaders() {
        String good = v1(CURRENT, NOW, BODY);
        return Stream.of(
                Arguments.of("no t", "v1=" + good),
                Arguments.of("no v1", "t=" + NOW),
                Arguments.of("no v1, only unknown schemes", "t=" + NOW + ",v0=" + good + ",v2=" + good),
                Arguments.of("duplicated t", "t=" + NOW + ",t=" + NOW + ",v1=" + good),
                Arguments.of("non-numeric t", "t=abc,v1=" + good),
                Arguments.of("hex t", "t=0x69,v1=" + good),
                Arguments.of("negative t", "t=-" + NOW + ",v1=" + good),
                Arguments.of("t with plus sign", "t=+" + NOW + ",v1=" + good),
                Arguments.of("t with a space inside", "t=1764 670530,v1=" + good),
                Arguments.of("t with a space after '='", "t= " + NOW + ",v1=" + good),
                Arguments.of("t with a decimal point", "t=" + NOW + ".0,v1=" + good),
                Arguments.of("t with a leading zero", "t=0" + NOW + ",v1=" + good),
                Arguments.of("t with unicode digits", "t=\u0661\u0662\u0663,v1=" + good),
                Arguments.of("t that would overflow a long", "t=99999999999999999999,v1=" + good),
                Arguments.of("empty t", "t=,v1=" + good),
                Arguments.of("bad hex", "t=" + NOW + ",v1=" + "g" + good.substring(1)),
                Arguments.of("v1 of 63 characters", "t=" + NOW + ",v1=" + good.substring(1)),
                Arguments.of("v1 of 65 characters", "t=" + NOW + ",v1=" + good + "0"),
                Arguments.of("empty v1", "t=" + NOW + ",v1="),
                Arguments.of("one good and one bad v1", "t=" + NOW + ",v1=" + good + ",v1=xyz"),
                Arguments.of("element without '='", "t=" + NOW + ",v1" + good),
                Arguments.of("stray element without '='", "t=" + NOW + ",v1=" + good + ",garbage"),
                Arguments.of("element without key", "t=" + NOW + ",=" + good + ",v1=" + good),
                Arguments.of("trailing comma", "t=" + NOW + ",v1=" + good + ","),
                Arguments.of("empty element", "t=" + NOW + ",,v1=" + good),
                Arguments.of("semicolon separator", "t=" + NOW + ";v1=" + good),
                Arguments.of("header too long", "t=" + NOW + ",v1=" + good + ",v0=" + "a".repeat(9000)));
    }

    static Stream<Arguments> everyRejection() {
        Stream<Arguments> missing = Stream.of(
                Arguments.of("null header", null, BODY),
                Arguments.of("empty header", "", BODY));
        Stream<Arguments> malformed = malformedHeaders().map(a -> Arguments.of(a.get()[0], a.get()[1], BODY));
        Stream<Arguments> other = Stream.of(
                Arguments.of("stale", TestSignatures.header(CURRENT, NOW - 301, BODY), BODY),
                Arguments.of("future", TestSignatures.header(PREVIOUS, NOW + 301, BODY), BODY),
                Arguments.of("unknown secret", TestSignatures.header(UNKNOWN, NOW, BODY), BODY),
                Arguments.of("tampered body", TestSignatures.header(CURRENT, PREVIOUS, NOW, BODY), new byte[]{1}),
                Arguments.of("secret in the header", "t=" + NOW + ",v1=" + CURRENT + PREVIOUS, BODY),
                Arguments.of("body in the header", "t=" + NOW + ",v1="
                        + new String(BODY, StandardCharsets.UTF_8), BODY));
        return Stream.of(missing, malformed, other).flatMap(s -> s);
    }
}
