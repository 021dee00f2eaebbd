package dev.sluice.kafka;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerExtensionsValidatorCallback;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerToken;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallback;

/**
 * The test broker's stand-in for Amazon MSK's IAM authentication: a SASL/OAUTHBEARER token is
 * the base64url form of a SigV4-presigned URL for the action {@code kafka-cluster:Connect} on
 * {@code kafka.<region>.amazonaws.com}, as aws-msk-iam-sasl-signer-js makes it. This handler
 * recomputes the signature with the one access key it is configured with (the JAAS options
 * {@code accessKeyId}, {@code secretAccessKey} and {@code region}) and refuses a token that is
 * unsigned, signed with another key, for another region, not yet valid or expired, each with a
 * message that says which. It authorizes nothing: MSK's per-action policies are not modelled.
 */
public final class MskIamTokenValidator implements AuthenticateCallbackHandler {
    private static final String ACTION = "kafka-cluster:Connect";
    private static final String SERVICE = "kafka-cluster";
    private static final String EMPTY_PAYLOAD_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    /** Query parameters the signer adds after signing, so outside the signature. */
    private static final Set<String> UNSIGNED_PARAMETERS = Set.of("X-Amz-Signature", "User-Agent");
    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    /** How far a token's signing time may lie ahead of the broker's clock, as AWS allows. */
    private static final long MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;

    private String accessKeyId;
    private String secretAccessKey;
    private String region;

    @Override
    public void configure(Map<String, ?> configs, String saslMechanism, List<AppConfigurationEntry> jaasConfigEntries) {
        Map<String, ?> options = jaasConfigEntries.get(0).getOptions();
        accessKeyId = required(options, "accessKeyId");
        secretAccessKey = required(options, "secretAccessKey");
        region = required(options, "region");
    }

    private static String required(Map<String, ?> options, String name) {
        Object value = options.get(name);
        if (!(value instanceof String) || ((String) value).isEmpty()) {
            throw new IllegalArgumentException("MskIamTokenValidator needs the JAAS option " + name);
        }
        return (String) value;
    }

    @Override
    public void handle(Callback[] callbacks) throws UnsupportedCallbackException {
        for (Callback callback : callbacks) {
            if (callback instanceof OAuthBearerValidatorCallback validation) {
                validation.token(validate(validation.tokenValue()));
            } else if (callback instanceof OAuthBearerExtensionsValidatorCallback extensions) {
                extensions.inputExtensions().map().keySet().forEach(extensions::valid);
            } else {
                throw new UnsupportedCallbackException(callback);
            }
        }
    }

    private Token validate(String tokenValue) {
        URI url;
        try {
            url = URI.create(new String(Base64.getUrlDecoder().decode(tokenValue), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException notAUrl) {
            throw refused("the token is not a base64url-encoded presigned URL");
        }
        Map<String, String> query = parameters(url.getRawQuery());
        String expectedHost = "kafka." + region + ".amazonaws.com";
        if (!expectedHost.equals(url.getHost())) {
            throw refused("the token is signed for " + url.getHost() + ", not this cluster's region (" + expectedHost + ")");
        }
        if (!ACTION.equals(query.get("Action")) || !"AWS4-HMAC-SHA256".equals(query.get("X-Amz-Algorithm"))) {
            throw refused("the token is not a SigV4 presigned " + ACTION + " request");
        }
        String[] credential = query.getOrDefault("X-Amz-Credential", "").split("/");
        if (credential.length != 5 || !SERVICE.equals(credential[3]) || !"aws4_request".equals(credential[4])) {
            throw refused("the token's X-Amz-Credential is not a " + SERVICE + " signing scope");
        }
        if (!region.equals(credential[2])) {
            throw refused("the token is signed for region " + credential[2] + ", not " + region);
        }
        if (!accessKeyId.equals(credential[0])) {
            throw refused("the token is signed with an access key this cluster does not know");
        }
        long signedAt;
        long expiresInMs;
        try {
            signedAt = Instant.from(AMZ_DATE.parse(query.getOrDefault("X-Amz-Date", ""))).toEpochMilli();
            // aws-msk-iam-sasl-signer-js writes the seconds left of expiring credentials with a fraction.
            expiresInMs = (long) (Double.parseDouble(query.getOrDefault("X-Amz-Expires", "")) * 1000);
        } catch (RuntimeException malformed) {
            throw refused("the token's X-Amz-Date or X-Amz-Expires is malformed");
        }
        long now = System.currentTimeMillis();
        if (signedAt - now > MAX_CLOCK_SKEW_MS) {
            throw refused("the token is signed in the future (" + query.get("X-Amz-Date") + "); check the client's clock");
        }
        long expiresAt = signedAt + expiresInMs;
        if (expiresAt <= now) {
            throw refused("the token expired at " + Instant.ofEpochMilli(expiresAt) + "; sign a new one for each connection");
        }
        String expected = signature(url.getHost(), query, credential[1], query.get("X-Amz-Date"));
        if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII), query.getOrDefault("X-Amz-Signature", "").getBytes(StandardCharsets.US_ASCII))) {
            throw refused("the token's signature does not match: it was signed with another secret key");
        }
        return new Token(tokenValue, accessKeyId, signedAt, expiresAt);
    }

    private static SaslAuthenticationException refused(String why) {
        return new SaslAuthenticationException("MSK IAM authentication failed: " + why);
    }

    private static Map<String, String> parameters(String rawQuery) {
        Map<String, String> parameters = new TreeMap<>();
        if (rawQuery == null) return parameters;
        for (String pair : rawQuery.split("&")) {
            int equals = pair.indexOf('=');
            String name = URLDecoder.decode(equals < 0 ? pair : pair.substring(0, equals), StandardCharsets.UTF_8);
            String value = equals < 0 ? "" : URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8);
            parameters.put(name, value);
        }
        return parameters;
    }

    private String signature(String host, Map<String, String> query, String date, String amzDate) {
        List<String> canonicalQuery = new ArrayList<>();
        query.forEach((name, value) -> {
            if (!UNSIGNED_PARAMETERS.contains(name)) canonicalQuery.add(uriEncode(name) + "=" + uriEncode(value));
        });
        canonicalQuery.sort(null);
        String canonicalRequest = String.join("\n", "GET", "/", String.join("&", canonicalQuery), "host:" + host, "", "host", EMPTY_PAYLOAD_SHA256);
        String scope = date + "/" + region + "/" + SERVICE + "/aws4_request";
        String stringToSign = String.join("\n", "AWS4-HMAC-SHA256", amzDate, scope, hex(sha256(canonicalRequest)));
        byte[] key = hmac(("AWS4" + secretAccessKey).getBytes(StandardCharsets.UTF_8), date);
        key = hmac(key, region);
        key = hmac(key, SERVICE);
        key = hmac(key, "aws4_request");
        return hex(hmac(key, stringToSign));
    }

    /** SigV4's encoding: every byte but the unreserved characters as %XX, in upper case. */
    private static String uriEncode(String text) {
        StringBuilder encoded = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~') {
                encoded.append(c);
            } else {
                encoded.append('%').append(String.format("%02X", b & 0xff));
            }
        }
        return encoded.toString();
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] hmac(byte[] key, String text) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(text.getBytes(StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }

    @Override
    public void close() {
    }

    /** A valid token: the broker ends its session when the token expires, unless the client re-authenticates first. */
    private record Token(String value, String principalName, Long startTimeMs, long lifetimeMs) implements OAuthBearerToken {
        @Override
        public Set<String> scope() {
            return Set.of();
        }
    }
}
