// The processor's state path without Kafka or a coordinator: a batch of a source stage's shard,
// claimed, run and written, for tests and benchmarks of the shard store and the stage under
// crashes, redelivery and gaps. The caller commits (`store.commit(batch.claim, batch.progress)`).
import type { KafkaRecord } from '../kafka/records.js';
import type { Plan, Stage } from '../plan/plan.js';
import { DEFAULT_MAX_CATCH_UP_RECORDS, prepareBatch, type PreparedBatch, type ShardLog } from '../runtime/shard-batch.js';
import type { ShardRef, ShardStore } from '../state/shard-store.js';

/** A partition's committed log as a list of its records, in offset order, with no transaction open. */
export function logOf(records: readonly KafkaRecord[]): ShardLog {
  const end = (records.at(-1)?.offset ?? -1) + 1;
  const from = (offset: number) => records.filter((record) => record.offset >= offset);
  return {
    read: (start, to) => Promise.resolve(from(start).filter((record) => record.offset < to)),
    readAvailable: (start, max) => {
      const found = from(start).slice(0, max);
      return Promise.resolve({ records: found, next: Math.max(start, (found.at(-1)?.offset ?? end - 1) + 1) });
    },
    end: () => Promise.resolve(end),
    readThrough: (start, until) => Promise.resolve((from(start)[0]?.offset ?? end) >= until),
  };
}

export interface StatePathBatch {
  readonly plan: Plan;
  /** A stage that reads a source topic. */
  readonly stage: Stage;
  readonly store: ShardStore;
  readonly shard: ShardRef;
  /** The delivered records. */
  readonly records: readonly KafkaRecord[];
  readonly clock: () => number;
  /** The partition's log, which a gap is read from; default the delivered records alone. */
  readonly log?: readonly KafkaRecord[];
  /** Where a shard that never committed starts; default the first delivered record. */
  readonly startingOffset?: number;
}

/** Claims the shard and prepares the batch (the processor's steps 1 to 4), its state written but not committed. */
export async function prepareStatePathBatch(options: StatePathBatch): Promise<PreparedBatch> {
  const { plan, stage, store, shard, records, clock } = options;
  const startingOffset = options.startingOffset ?? records[0]?.offset ?? 0;
  const input = { kind: 'source', log: logOf(options.log ?? records), startingOffset: () => Promise.resolve(startingOffset), stageWatermark: Number.MIN_SAFE_INTEGER } as const;
  const claim = await store.claim(shard);
  const prepared = await prepareBatch({ plan, stage, store, shard, input, clock, maxCatchUpRecords: DEFAULT_MAX_CATCH_UP_RECORDS }, claim, records, true);
  await store.write(claim, prepared.changes);
  return prepared;
}
