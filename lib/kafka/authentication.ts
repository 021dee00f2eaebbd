import { generateAuthToken } from 'aws-msk-iam-sasl-signer-js';
import type { SASLOptions } from 'kafkajs';

/** How to authenticate to the brokers (plaintext without it). */
export type KafkaAuthentication =
  | { readonly kind: 'tls' }
  /** Amazon MSK IAM: SASL/OAUTHBEARER tokens signed with the AWS credentials at hand. */
  | { readonly kind: 'msk-iam'; readonly region: string }
  | { readonly kind: 'scram-sha-512'; readonly username: string; readonly password: string };

/** kafkajs's `ssl` and `sasl` settings for an authentication. Credentials go only to the broker, never into logs or errors. */
export function kafkajsSecurity(authentication: KafkaAuthentication | undefined): { ssl?: boolean; sasl?: SASLOptions } {
  switch (authentication?.kind) {
    case undefined:
      return {};
    case 'tls':
      return { ssl: true };
    case 'msk-iam': {
      const { region } = authentication;
      return {
        ssl: true,
        sasl: {
          mechanism: 'oauthbearer',
          oauthBearerProvider: async () => ({ value: (await generateAuthToken({ region })).token }),
        },
      };
    }
    case 'scram-sha-512':
      return { ssl: true, sasl: { mechanism: 'scram-sha-512', username: authentication.username, password: authentication.password } };
  }
}
