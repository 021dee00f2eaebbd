import { describe, expect, it } from 'vitest';
import { brokersFromEnvironment, parseBrokerList } from '../../../lib/kafka/index.js';

describe('broker lists', () => {
  it('parses host:port lists, trimming spaces and empty entries', () => {
    expect(parseBrokerList(' 127.0.0.1:9092, kafka-2.internal:19092 ,', 'test')).toEqual([
      '127.0.0.1:9092',
      'kafka-2.internal:19092',
    ]);
    expect(parseBrokerList('[::1]:9092', 'test')).toEqual(['[::1]:9092']);
  });

  it.each([
    ['', /KAFKA_BROKERS is empty/],
    ['localhost', /KAFKA_BROKERS has "localhost", which is not host:port/],
    ['localhost:0', /not host:port/],
    ['localhost:70000', /not host:port/],
    ['a:9092,b', /has "b"/],
  ])('rejects %j with a message naming the source and the entry', (value, message) => {
    expect(() => parseBrokerList(value, 'KAFKA_BROKERS')).toThrow(message);
  });

  it('reads KAFKA_BROKERS, and nothing when it is unset or blank', () => {
    expect(brokersFromEnvironment({ KAFKA_BROKERS: 'a:1,b:2' })).toEqual(['a:1', 'b:2']);
    expect(brokersFromEnvironment({})).toBeUndefined();
    expect(brokersFromEnvironment({ KAFKA_BROKERS: '  ' })).toBeUndefined();
  });
});
