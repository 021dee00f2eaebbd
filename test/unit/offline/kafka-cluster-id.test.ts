// The local broker formats its storage with a fresh cluster id; kafka-storage's parser reads an
// id that starts with '-' as an option, so such a draw must never reach it.
import { describe, expect, it } from 'vitest';
import { kafkaClusterId } from '../../../lib/offline/kafka-broker.js';

describe('kafkaClusterId', () => {
  it("draws again when the id would start with '-', and keeps Kafka's 22-character form", () => {
    // 0xf8 puts 62 in the first six bits: '-' in URL-safe base64.
    const draws = [Buffer.alloc(16, 0xf8), Buffer.alloc(16, 0x41)];
    const id = kafkaClusterId(() => draws.shift() as Buffer);
    expect(Buffer.alloc(16, 0xf8).toString('base64url').startsWith('-')).toBe(true);
    expect(id).toBe(Buffer.alloc(16, 0x41).toString('base64url'));
    expect(draws).toHaveLength(0);
  });

  it('gives ids the storage tool can take as an argument value', () => {
    for (let i = 0; i < 2_000; i++) expect(kafkaClusterId()).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
  });
});
