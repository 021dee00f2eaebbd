// Nexmark's queries on Sluice give Flink 2.2's results: each query's SQL, planned as Sluice plans
// it (repartitioned by its keys), over the kept results' events, against the rows Flink wrote
// into Kafka EXACTLY_ONCE from the same events (bench/nexmark/expected; CI makes them again).
import { describe, expect, it } from 'vitest';
import { PipelineTestHarness } from '../../../lib/testing/index.js';
import { compareRows, resultRows } from '../../../bench/nexmark/compare.js';
import { EXPECTED_EVENTS, EXPECTED_GENERATOR, inputsHash, readExpected } from '../../../bench/nexmark/expected.js';
import { eventAt, eventJson, sqlTimestamp } from '../../../bench/nexmark/generator.js';
import { eventTopic, isUpdating, JOIN_QUERIES, NEXMARK_QUERIES, nexmarkPipeline, sourceKinds, type NexmarkQuery } from '../../../bench/nexmark/queries.js';
import { closingEvents, nexmarkRecords } from '../../../bench/nexmark/topics.js';

const PREFIX = 'nexmark';

function sluiceRows(query: NexmarkQuery): string[] {
  const output = `${query}-out`;
  const env = nexmarkPipeline(query, { brokers: ['127.0.0.1:9092'], prefix: PREFIX, output, checkpointIntervalMs: 5_000 });
  // The tables the query reads: a topic that is no source gets no records.
  const read = sourceKinds(env, PREFIX);
  const harness = new PipelineTestHarness(env, { sourcePartitions: Object.fromEntries(read.map((kind) => [eventTopic(PREFIX, kind), [0]])) });
  const records = [...nexmarkRecords(EXPECTED_EVENTS, 1, EXPECTED_GENERATOR)].filter((record) => read.includes(record.kind));
  // A batch at a time, as the event source mapping delivers them: watermarks move between batches.
  for (let start = 0; start < records.length; start += 100) {
    const batch = records.slice(start, start + 100);
    for (const kind of read) {
      const ofKind = batch.filter((record) => record.kind === kind).map(({ value, timestamp }) => ({ value, timestamp }));
      if (ofKind.length > 0) harness.send(eventTopic(PREFIX, kind), ofKind);
    }
  }
  harness.finish();
  return resultRows(harness.output(output), { updating: isUpdating(query) });
}

describe('Nexmark on Sluice', () => {
  it.each([...NEXMARK_QUERIES, ...JOIN_QUERIES].map((query) => [query]))("%s gives Flink's result on the same events", (query) => {
    const expected = readExpected(query);
    expect(expected?.hash, `Flink's result of ${query} is missing or its inputs changed: npm run nexmark -- --expected write`).toBe(inputsHash(query));
    const rows = sluiceRows(query);
    expect(rows.length, 'the query wrote something').toBeGreaterThan(0);
    const comparison = compareRows(rows, expected?.rows ?? []);
    expect(comparison, comparison.difference).toMatchObject({ equal: true });
  });

  it('draws every event from the seed and its id alone, in the proportions 1:3:46, bids crowding on hot auctions and bidders', () => {
    const events = Array.from({ length: 5_000 }, (_, id) => eventAt(id, EXPECTED_GENERATOR));
    expect(eventJson(eventAt(4_321, EXPECTED_GENERATOR))).toBe(eventJson(events[4_321] ?? eventAt(0)));
    expect(eventJson(eventAt(4_321, { ...EXPECTED_GENERATOR, seed: 2 }))).not.toBe(eventJson(events[4_321] ?? eventAt(0)));
    const kinds = events.reduce((counts, event) => counts.set(event.kind, (counts.get(event.kind) ?? 0) + 1), new Map<string, number>());
    expect(Object.fromEntries(kinds)).toEqual({ person: 100, auction: 300, bid: 4_600 });
    const bids = events.flatMap((event) => (event.kind === 'bid' ? [event.bid] : []));
    const share = (count: (bid: (typeof bids)[number]) => number) => {
      const counts = bids.reduce((all, bid) => all.set(count(bid), (all.get(count(bid)) ?? 0) + 1), new Map<number, number>());
      return Math.max(...counts.values()) / bids.length;
    };
    expect(share((bid) => bid.auction)).toBeGreaterThan(0.2);
    expect(share((bid) => bid.bidder)).toBeGreaterThan(0.5);
    expect(sqlTimestamp(events[50]?.kind === 'person' ? events[50].person.dateTime : 0)).toBe('2026-12-01 00:00:01.000');
    expect(closingEvents(EXPECTED_EVENTS, EXPECTED_GENERATOR).map((event) => event.kind)).toEqual(['person', 'auction', 'bid']);
  });
});
