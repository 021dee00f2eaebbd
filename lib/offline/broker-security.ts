import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOnce } from './cache-folder.js';
import { javaCommand, runTool } from './java-service.js';

/**
 * The local broker's encrypted and authenticated listeners, as Amazon MSK offers them: TLS
 * alone, and SASL over TLS with SCRAM-SHA-512 and with MSK IAM's OAUTHBEARER tokens. Tests
 * ask for them; plaintext stays the default.
 */
export interface LocalBrokerSecurity {
  /** SCRAM-SHA-512 users the broker knows from its first start. */
  readonly scramUsers: readonly { readonly username: string; readonly password: string }[];
  /**
   * The one AWS access key whose MSK IAM tokens the broker accepts, and its region: the
   * SASL_SSL listener's OAUTHBEARER checks each token's SigV4 signature with it
   * (infra/kafka/security/MskIamTokenValidator.java).
   */
  readonly mskIam?: { readonly region: string; readonly accessKeyId: string; readonly secretAccessKey: string };
  /** `connections.max.reauth.ms`: how long a SASL session lasts before the client must authenticate again. */
  readonly maxReauthenticationMs?: number;
}

/** Where a secured broker listens, and the certificate authority its certificate chains to. */
export interface SecuredListeners {
  /** SASL_SSL: SCRAM-SHA-512, and OAUTHBEARER when `mskIam` is set. */
  readonly saslSsl: string[];
  /** SSL: TLS without authentication. */
  readonly ssl: string[];
  /** The test certificate authority, PEM: a client trusts the listeners only with it. */
  readonly caPem: string;
}

const SECURITY_SOURCES = fileURLToPath(new URL('../../infra/kafka/security/', import.meta.url));
const VALIDATOR_SOURCE = 'MskIamTokenValidator.java';
const VALIDATOR_CLASS = 'dev.sluice.kafka.MskIamTokenValidator';

/** The ports of the secured listeners, past the client and controller ports. */
export function securedPorts(port: number): { readonly saslSsl: number; readonly ssl: number } {
  return { saslSsl: port + 2, ssl: port + 3 };
}

interface BrokerKeystore {
  readonly caPem: string;
  readonly keystoreFile: string;
  readonly password: string;
}

function openssl(args: string[], what: string): void {
  runTool('openssl', args, what);
}

/**
 * A certificate authority made for this broker, and the broker's key and certificate signed by
 * it, naming only 127.0.0.1: a client that connects by another name fails hostname verification,
 * as it should. Both live a day, long past any test run.
 */
function createKeystore(dir: string): BrokerKeystore {
  mkdirSync(dir, { recursive: true });
  const file = (name: string) => join(dir, name);
  const password = randomBytes(12).toString('hex');
  writeFileSync(file('san.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=Sluice local test CA', '-keyout', file('ca.key'), '-out', file('ca.pem')], 'make the test certificate authority');
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', file('broker.key'), '-out', file('broker.csr')], 'make the broker key');
  openssl(
    ['x509', '-req', '-days', '1', '-in', file('broker.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-extfile', file('san.cnf'), '-out', file('broker.pem')],
    'sign the broker certificate',
  );
  openssl(['pkcs12', '-export', '-in', file('broker.pem'), '-inkey', file('broker.key'), '-name', 'broker', '-passout', `pass:${password}`, '-out', file('broker.p12')], 'write the broker keystore');
  return { caPem: readFileSync(file('ca.pem'), 'utf8'), keystoreFile: file('broker.p12'), password };
}

/** The validator's classes, compiled once per source version against the broker's own jars. */
function validatorClasses(cacheDir: string, kafkaLibs: string): string {
  const source = join(SECURITY_SOURCES, VALIDATOR_SOURCE);
  const digest = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 12);
  return buildOnce(join(cacheDir, `msk-iam-validator-${digest}`), (staging) => {
    runTool(javaCommand('javac'), ['-d', staging, '-cp', join(kafkaLibs, '*'), source], 'compile the test broker’s MSK IAM token validator');
  });
}

/** A JAAS option's value, quoted as Kafka's parser reads it. */
function jaasValue(value: string): string {
  if (/["\\]/.test(value)) throw new Error(`A JAAS option may not hold a quote or a backslash: ${JSON.stringify(value)}`);
  return `"${value}"`;
}

export interface SecuredBrokerConfig {
  readonly listeners: SecuredListeners;
  /** Appended to `listeners` and `advertised.listeners`. */
  readonly listenerSuffix: string;
  readonly properties: string;
  /** Added to the broker's classpath. */
  readonly classpath: string[];
  /** `kafka-storage format` arguments that create the SCRAM users. */
  readonly formatArguments: string[];
}

/** What a broker on `port` needs for the secured listeners: its keystore in `stateDir`, and its configuration. */
export function securedBrokerConfig(
  security: LocalBrokerSecurity,
  { port, stateDir, cacheDir, kafkaLibs }: { port: number; stateDir: string; cacheDir: string; kafkaLibs: string },
): SecuredBrokerConfig {
  const ports = securedPorts(port);
  const tlsDir = join(stateDir, 'tls');
  mkdirSync(tlsDir, { recursive: true });
  const keystore = createKeystore(tlsDir);
  const mechanisms = ['SCRAM-SHA-512', ...(security.mskIam ? ['OAUTHBEARER'] : [])];
  const lines = [
    'ssl.keystore.type=PKCS12',
    `ssl.keystore.location=${keystore.keystoreFile}`,
    `ssl.keystore.password=${keystore.password}`,
    `ssl.key.password=${keystore.password}`,
    `sasl.enabled.mechanisms=${mechanisms.join(',')}`,
    'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
  ];
  const classpath: string[] = [];
  if (security.mskIam) {
    const { region, accessKeyId, secretAccessKey } = security.mskIam;
    // The login module also logs the broker itself in, with Kafka's unsecured token, which needs a subject; the
    // broker never uses it, as brokers and controller speak plaintext among themselves.
    lines.push(
      `listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ` +
        `unsecuredLoginStringClaim_sub="broker" region=${jaasValue(region)} accessKeyId=${jaasValue(accessKeyId)} secretAccessKey=${jaasValue(secretAccessKey)};`,
      `listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class=${VALIDATOR_CLASS}`,
    );
    classpath.push(validatorClasses(cacheDir, kafkaLibs));
  }
  if (security.maxReauthenticationMs !== undefined) lines.push(`connections.max.reauth.ms=${security.maxReauthenticationMs}`);
  return {
    listeners: { saslSsl: [`127.0.0.1:${ports.saslSsl}`], ssl: [`127.0.0.1:${ports.ssl}`], caPem: keystore.caPem },
    listenerSuffix: `,SASL_SSL://127.0.0.1:${ports.saslSsl},SSL://127.0.0.1:${ports.ssl}`,
    properties: lines.join('\n'),
    classpath,
    formatArguments: security.scramUsers.flatMap(({ username, password }) => ['--add-scram', `SCRAM-SHA-512=[name=${username},password=${password}]`]),
  };
}
