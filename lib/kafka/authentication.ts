import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { isIP } from 'node:net';
import { generateAuthToken, generateAuthTokenFromCredentialsProvider } from 'aws-msk-iam-sasl-signer-js';
import type { SASLOptions } from 'kafkajs';

/** AWS credentials, as the AWS SDK's providers give them. */
export type AwsCredentialsProvider = () => Promise<{
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  /** When they stop working: a token signed with them expires then too. */
  readonly expiration?: Date;
}>;

/** What every encrypted connection may add: the certificate authorities to trust. */
export interface KafkaTlsOptions {
  /**
   * PEM certificates of the authorities that sign the brokers' certificates, trusted instead of
   * Node's bundled ones: for a self-managed cluster with its own CA. Amazon MSK's certificates
   * chain to public authorities, so MSK needs none.
   */
  readonly ca?: string;
}

/** How to authenticate to the brokers (plaintext without it). Every kind runs over TLS, with certificate and hostname verification. */
export type KafkaAuthentication =
  | ({ readonly kind: 'tls' } & KafkaTlsOptions)
  /**
   * Amazon MSK IAM: SASL/OAUTHBEARER tokens signed with the AWS credentials at hand (the default
   * provider chain: in Lambda, the function's role), or with `credentials`. A token is signed
   * for each connection and each re-authentication the broker asks for, so none outlives its
   * credentials.
   */
  | ({ readonly kind: 'msk-iam'; readonly region: string; readonly credentials?: AwsCredentialsProvider } & KafkaTlsOptions)
  | ({ readonly kind: 'scram-sha-512'; readonly username: string; readonly password: string } & KafkaTlsOptions);

function tlsSettings({ ca }: KafkaTlsOptions): true | { ca: string[] } {
  return ca === undefined ? true : { ca: [ca] };
}

/** kafkajs's `ssl` and `sasl` settings for an authentication. Credentials go only to the broker, never into logs or errors. */
export function kafkajsSecurity(authentication: KafkaAuthentication | undefined): { ssl?: true | { ca: string[] }; sasl?: SASLOptions } {
  switch (authentication?.kind) {
    case undefined:
      return {};
    case 'tls':
      return { ssl: tlsSettings(authentication) };
    case 'msk-iam': {
      const { region, credentials } = authentication;
      const sign = credentials
        ? () => generateAuthTokenFromCredentialsProvider({ region, awsCredentialsProvider: credentials })
        : () => generateAuthToken({ region });
      return {
        ssl: tlsSettings(authentication),
        sasl: { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: (await sign()).token }) },
      };
    }
    case 'scram-sha-512':
      return {
        ssl: tlsSettings(authentication),
        sasl: { mechanism: 'scram-sha-512', username: authentication.username, password: authentication.password },
      };
  }
}

/**
 * The brokers refused a connection for a reason no retry mends: a certificate the client does
 * not trust, a wrong password, a token for another region or out of date. The message is one
 * line that names the broker and says what to fix; the kafkajs error is its cause.
 */
export class KafkaAuthenticationError extends Error {
  override readonly name = 'KafkaAuthenticationError';

  constructor(
    readonly broker: string,
    message: string,
    cause: unknown,
  ) {
    super(message, { cause });
  }
}

/** Node's codes for a certificate chain or name that fails verification. */
const CERTIFICATE_FAILURES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function certificateFailure(broker: string, authentication: KafkaAuthentication, error: { code?: unknown; message: string }): KafkaAuthenticationError {
  const fix =
    error.code === 'ERR_TLS_CERT_ALTNAME_INVALID'
      ? 'connect by a name the broker’s certificate holds (the bootstrap address the cluster gives)'
      : authentication.ca === undefined
        ? 'if the cluster has its own certificate authority, give its PEM certificate (KAFKA_TLS_CA_FILE, or `ca` in the authentication)'
        : 'the certificate authority given (KAFKA_TLS_CA_FILE, or `ca`) is not the one that signed the broker’s certificate';
  return new KafkaAuthenticationError(broker, `Kafka broker ${broker} presented a certificate that fails verification (${error.code as string}: ${error.message}): ${fix}.`, error);
}

/**
 * Makes one TLS handshake with the first broker, as kafkajs will, and fails at once when its
 * certificate does not verify: kafkajs counts that as a connection error and would retry it with
 * backoff for seconds. A broker that cannot be reached is left to kafkajs's retries. Run once a
 * process per broker list; in a warm container it costs nothing.
 */
async function verifyCertificate(broker: string, authentication: KafkaAuthentication, timeoutMs: number): Promise<void> {
  const separator = broker.lastIndexOf(':');
  const host = broker.slice(0, separator);
  const options: ConnectionOptions = {
    host,
    port: Number(broker.slice(separator + 1)),
    ...(isIP(host) ? {} : { servername: host }),
    ...(authentication.ca === undefined ? {} : { ca: [authentication.ca] }),
  };
  await new Promise<void>((resolve, reject) => {
    const socket = tlsConnect(options, () => {
      socket.destroy();
      resolve();
    });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', (error: Error & { code?: string }) => {
      socket.destroy();
      if (error.code !== undefined && CERTIFICATE_FAILURES.has(error.code)) reject(certificateFailure(broker, authentication, error));
      else resolve();
    });
  });
}

const verifiedBrokers = new Set<string>();

/** Checks the first broker's certificate, once a process for each broker list and authority. */
export async function verifyBrokerCertificate(brokers: readonly string[], authentication: KafkaAuthentication | undefined, timeoutMs: number): Promise<void> {
  const first = brokers[0];
  if (authentication === undefined || first === undefined) return;
  const key = `${brokers.join(',')}\n${authentication.ca ?? ''}`;
  if (verifiedBrokers.has(key)) return;
  await verifyCertificate(first, authentication, timeoutMs);
  verifiedBrokers.add(key);
}

function saslFix(authentication: KafkaAuthentication): string {
  switch (authentication.kind) {
    case 'scram-sha-512':
      return `check the username ("${authentication.username}") and password in the secret KAFKA_SASL_SECRET_ARN names (KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD outside AWS), and that the cluster has that SCRAM user`;
    case 'msk-iam':
      return `check that AWS_REGION (${authentication.region}) is the cluster's region, that the function's clock is right and that its role's credentials are current`;
    case 'tls':
      return 'the listener asks for SASL: set KAFKA_AUTH to IAM or SCRAM';
  }
}

/**
 * A clear, one-line error for a connection the brokers refused for good, or undefined when
 * `error` is another failure (those keep their own errors and retries).
 */
export function authenticationFailure(error: unknown, brokers: readonly string[], authentication: KafkaAuthentication | undefined): KafkaAuthenticationError | undefined {
  if (authentication === undefined || typeof error !== 'object' || error === null || error instanceof KafkaAuthenticationError) return undefined;
  const { name, message, code, broker } = error as { name?: unknown; message?: unknown; code?: unknown; broker?: unknown };
  const at = typeof broker === 'string' ? broker : brokers.join(',');
  if (name === 'KafkaJSSASLAuthenticationError') {
    const mechanism = authentication.kind === 'msk-iam' ? 'SASL/OAUTHBEARER (MSK IAM)' : 'SASL/SCRAM-SHA-512';
    const reason = String(message).replace(/^SASL .*? authentication failed: /, '').replace(/\s+/g, ' ');
    return new KafkaAuthenticationError(at, `Kafka broker ${at} refused ${mechanism} authentication (${reason}): ${saslFix(authentication)}.`, error);
  }
  if (typeof code === 'string' && CERTIFICATE_FAILURES.has(code)) {
    return certificateFailure(at, authentication, { code, message: String(message).replace(/^Connection error: /, '') });
  }
  return undefined;
}
