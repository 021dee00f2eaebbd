import { describe, expect, it } from 'vitest';
import { criticalPath, modelledBilledMs, type Span } from '../../../bench/critical-path.js';

const span = (operation: string, start: number, end: number): Span => ({ operation, start, end });

describe('the modelled critical path of a batch', () => {
  it('adds requests that waited for one another, and takes the slowest of those in flight together', () => {
    const keyWrites = Array.from({ length: 20 }, (_, i) => span('DynamoDB.PutItem', 3 + i * 0.01, 5 + i * 0.01));
    const path = criticalPath([
      span('DynamoDB.GetItem', 0, 1),
      span('DynamoDB.PutItem', 0.1, 1.2),
      span('DynamoDB.BatchGetItem', 1.5, 2.5),
      ...keyWrites,
      // The delta object beside the key writes, and a transaction's three requests one after another.
      span('S3.PutObject', 3, 9.2),
      span('Kafka.InitProducerId', 5.5, 6.5),
      span('Kafka.AddPartitionsToTxn', 6.5, 7.8),
      span('Kafka.Produce', 8, 9.5),
      span('DynamoDB.PutItem', 10, 11),
    ]);
    // Claim and read (4), keys read (4), the delta object over the key writes and the
    // transaction (20), the commit (4).
    expect(path).toEqual({ waitMs: 32, roundTrips: { DynamoDB: 3, S3: 1, Kafka: 0 } });
  });

  it('takes a Kafka request to start as late as kafkajs’s whole milliseconds allow', () => {
    // Read as starting 0.6 ms before the first ended; it may have started after.
    const path = criticalPath([span('Kafka.InitProducerId', 0, 1), span('Kafka.Produce', 0.4, 2)]);
    expect(path).toEqual({ waitMs: 4, roundTrips: { DynamoDB: 0, S3: 0, Kafka: 2 } });
  });

  it('bills the CPU at the share of a vCPU the memory size buys, plus the waits, in whole milliseconds', () => {
    expect(modelledBilledMs(20, 30, 1_769)).toBe(50);
    expect(modelledBilledMs(20, 30, 1_024)).toBe(65);
    expect(modelledBilledMs(20, 30, 3_008)).toBe(50);
  });

  it('refuses a request of a service it assumes no latency for', () => {
    expect(() => criticalPath([span('SQS.SendMessage', 0, 1)])).toThrow('No latency is assumed for SQS.SendMessage');
  });
});
