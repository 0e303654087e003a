package dev.metakit.inbox.signature;

import dev.metakit.inbox.signature.SignatureVerificationException.Reason;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class SignatureHeaderPropertiesTest {
    private static final SignatureVerifier VERIFIER = new SignatureVerifier(List.of("mk_property_secret"),
            Duration.ofSeconds(300), Clock.fixed(Instant.ofEpochSecond(1_764_670_530L), ZoneOffset.UTC));

    @Property(tries = 2000)
    void anyStringEitherParsesOrIsRejectedAsMissingOrMalformed(@ForAll @StringLength(max = 300) String header) {
        assertParsesOrRejects(header);
    }

    @Property(tries = 200)
    void aStringLongerThanTheCapIsRejected(@ForAll @StringLength(min = 8193, max = 20_000) String header) {
        Reason reason = assertParsesOrRejects(header);
        assertThat(reason).isIn(Reason.MISSING_HEADER, Reason.MALFORMED_HEADER);
    }

    @Property(tries = 3000)
    void aStringBuiltFromHeaderFragmentsEitherParsesOrIsRejected(@ForAll("fragmentStrings") String header) {
        assertParsesOrRejects(header);
    }

    @Property(tries = 2000)
    void theVerifierThrowsNothingButARejectionForAnyHeaderAndBody(@ForAll("fragmentStrings") String header,
                                                                    @ForAll @Size(max = 64) byte[] body) {
        try {
            VERIFIER.verify(header, body);
        } catch (SignatureVerificationException e) {
            assertThat(e.reason()).isNotNull();
        }
    }

    @Property(tries = 1000)
    void aWellFormedHeaderParsesBackToTheSameValues(
            @ForAll @LongRange(min = 0, max = 999_999_999_999_999_999L) long t,
            @ForAll("signatures") List<String> signatures,
            @ForAll boolean withUnknownSchemes,
            @ForAll @IntRange(max = 2) int spaces) throws SignatureVerificationException {
        String pad = " ".repeat(spaces);
        List<String> elements = new ArrayList<>();
        elements.add("t=" + t);
        for (String v1 : signatures) {
            if (withUnknownSchemes) {
                elements.add("v0=" + v1);
            }
            elements.add("v1=" + v1);
        }
        if (withUnknownSchemes) {
            elements.add("v2=anything-at=all");
        }
        String header = pad + String.join(pad + "," + pad, elements) + pad;

        SignatureHeader parsed = SignatureHeader.parse(header);

        assertThat(parsed.timestamp()).isEqualTo(t);
        assertThat(parsed.v1()).containsExactlyElementsOf(signatures);
    }

    @Provide
    Arbitrary<List<String>> signatures() {
        Arbitrary<String> hex = Arbitraries.bytes().array(byte[].class).ofSize(32)
                .map(bytes -> HexFormat.of().formatHex(bytes))
                .flatMap(lower -> Arbitraries.of(lower, lower.toUpperCase()));
        return hex.list().ofMinSize(1).ofMaxSize(4);
    }

    @Provide
    Arbitrary<String> fragmentStrings() {
        Arbitrary<String> digits = Arbitraries.strings().numeric().ofMaxLength(22);
        Arbitrary<String> hex = Arbitraries.strings().withChars("0123456789abcdefABCDEFg").ofMinLength(62)
                .ofMaxLength(66);
        Arbitrary<String> fragment = Arbitraries.oneOf(
                Arbitraries.of("t=", "v1=", "v0=", "v2=", ",", "=", " ", "\t", "-", "+", "\u0000", "\u0661",
                        "\uD83D\uDE00", "\uD800", "t", "v1"),
                digits, hex, Arbitraries.strings().ofMaxLength(4));
        return fragment.list().ofMaxSize(12).map(parts -> String.join("", parts));
    }

    /** @return the rejection reason, or null if the header parsed */
    private static Reason assertParsesOrRejects(String header) {
        try {
            SignatureHeader parsed = SignatureHeader.parse(header);
            assertThat(parsed.timestamp()).isNotNegative();
            assertThat(parsed.v1()).isNotEmpty().allSatisfy(v1 -> assertThat(v1).hasSize(64));
            return null;
        } catch (SignatureVerificationException e) {
            assertThat(e.reason()).isIn(Reason.MISSING_HEADER, Reason.MALFORMED_HEADER);
            return e.reason();
        }
        // anything else propagates and fails the property
    }
}
