// Scripted interleavings of stale actors, on the simulation's twins: each holds one actor at a
// promise while the others move on, the shape in which the holes were first reproduced.
import { describe, expect, it } from 'vitest';
import { minutes } from '../../lib/api/index.js';
import type { TransactionHandle } from '../../lib/kafka/index.js';
import { runCoordinator } from '../../lib/runtime/coordinator.js';
import { commitCompletedCheckpoints } from '../../lib/runtime/commit-function.js';
import { shardRefOf, type ShardTarget } from '../../lib/runtime/shard-record.js';
import { type ProcessorStep } from '../../lib/runtime/processor.js';
import { runtimeProgressOf } from '../../lib/runtime/shard-record.js';
import { checkpointManifestKey, readManifest } from '../../lib/snapshot/checkpoint-state.js';
import { MemoryCoordinatorStore } from '../../lib/state/coordinator-store.js';
import { compareOutput, expectedOutput, SCHEDULE_KINDS } from '../helpers/order-totals-kinds.js';
import { expectedTotals, type GeneratedOrder } from '../helpers/orders.js';
import type { Total } from '../helpers/pipelines.js';
import { appendOrders, onTwins } from '../helpers/twins.js';

class Crash extends Error {}

function order(i: number, timestamp: number): GeneratedOrder {
  return { orderId: `o-${i}`, category: 'books', amount: 10 + i, timestamp, late: false };
}

describe('a stale commit function', () => {
  it('does not roll back a committed transaction whose transactional id was reused since', async () => {
    let crashAt: ProcessorStep | undefined;
    const { time, clock, kafka, plan, store, coordinator, snapshots, processor, shards } = await onTwins(
      { name: 'stale', window: minutes(5) },
      {
        transactionPoolSize: 2,
        onStep: (step) => {
          if (step === crashAt) throw new Crash(step);
        },
      },
    );
    const [target] = shards;
    if (!target) throw new Error('no shard');
    const tick = () => Promise.resolve();
    const start = time.now - 3_600_000;
    const orders = [order(0, start), order(1, start + 400_000), order(2, start + 800_000), order(3, start + 1_200_000), order(4, start + 4_000_000)];
    const offsets = appendOrders(kafka, orders);
    const records = (from: number, to: number) => kafka.reader.read({ topic: 'orders', partition: 0, from, to });
    const deliver = (from: number, to: number) => records(from, to).then((batch) => processor.processShard(target.stageId, target.topic, 0, batch));

    // Checkpoint 1 covers the first batch's transaction H1 (slot 1 of 2): it fires the first window.
    await runCoordinator({ plan, store, coordinator, shards, tick, clock, snapshots });
    const first = await deliver(0, 2);
    expect(first.recordsOut).toBe(1);
    time.now += 1_000;
    expect((await runCoordinator({ plan, store, coordinator, shards, tick, clock, snapshots })).outcome).toBe('completed');

    // A commit run reads the shard's pending H1 and is held before it commits it.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached: () => void = () => undefined;
    const atCommit = new Promise<void>((resolve) => (reached = resolve));
    const staleCommitter = {
      ...kafka.committer,
      commit: async (handle: TransactionHandle) => {
        reached();
        await held;
        return kafka.committer.commit(handle);
      },
    };
    const stale = commitCompletedCheckpoints({ plan, store, coordinator, committer: staleCommitter, shards, snapshots });
    await atCommit;
    // Another run commits H1 and marks checkpoint 1 committed.
    await commitCompletedCheckpoints({ plan, store, coordinator, committer: kafka.committer, shards, snapshots });
    expect((await coordinator.get()).committed).toBe(1);

    // Epoch 2 crashes; epoch 3 (slot 1 again) initialises H1's id, writes, and crashes before its
    // commit, so the shard record still names H1.
    crashAt = 'state-written';
    await expect(deliver(2, 3)).rejects.toBeInstanceOf(Crash);
    crashAt = 'output-written';
    await expect(deliver(2, 3)).rejects.toBeInstanceOf(Crash);
    crashAt = undefined;

    // The stale run finds H1 fenced: its checkpoint is committed, so it was settled; nothing is rolled back.
    release();
    expect((await stale).rollbacks).toEqual([]);
    expect((await coordinator.get()).rollbacks ?? []).toEqual([]);

    // The rest of the input, then checkpoints until everything is committed.
    await deliver(2, 5);
    for (let round = 0; round < 4; round++) {
      time.now += 11_000;
      await runCoordinator({ plan, store, coordinator, shards, tick: async (t) => {
          await processor.processShard(t.stageId, t.topic, t.partition, []);
        }, clock, snapshots });
      await commitCompletedCheckpoints({ plan, store, coordinator, committer: kafka.committer, shards, snapshots });
    }
    const written = kafka.committedRecords('stale-out').map((r) => JSON.parse(r.value?.toString() ?? 'null') as Total);
    const totals = new Map(written.map((t) => [`${t.category}@${t.windowStart}`, t.amount]));
    expect(written).toHaveLength(totals.size);
    expect(totals).toEqual(expectedTotals(orders.slice(0, 4), minutes(5)));
    expect(offsets).toHaveLength(5);
  });
});

describe('a rolled-back stage', () => {
  it('keeps its previous committed watermark until its replay is committed, so later stages get the replay on time', async () => {
    const { time, clock, kafka, plan, store, coordinator, snapshots, processor, shards } = await onTwins({
      name: 'held',
      ...SCHEDULE_KINDS['two-stage'],
      transactionTimeoutMs: 4_000,
    });
    const invoke = (t: ShardTarget, records: Awaited<ReturnType<typeof kafka.reader.read>>) =>
      processor.processShard(t.stageId, t.topic, t.partition, records);
    const tick = async (t: ShardTarget) => {
      await invoke(t, []);
    };
    const coordinate = () => runCoordinator({ plan, store, coordinator, shards, tick, clock, snapshots });
    const commit = () => commitCompletedCheckpoints({ plan, store, coordinator, committer: kafka.committer, shards, snapshots });
    const start = time.now - 3_600_000;
    const orders = Array.from({ length: 12 }, (_, i) => ({
      orderId: `o-${i}`,
      category: `category-${i % 3}`,
      amount: 5 + i,
      timestamp: start + i * 20_000,
      late: false,
    }));
    const closing = { ...order(99, start + 3_000_000), category: 'category-0', amount: 0 };
    appendOrders(kafka, [...orders, closing]);
    const [source] = shards;
    if (!source) throw new Error('no shard');

    // Checkpoint 1 covers stage 1's whole output, in one transaction, which the broker then aborts.
    await coordinate();
    await invoke(source, await kafka.reader.read({ topic: 'orders', partition: 0, from: 0, to: 13 }));
    time.now += 500;
    expect((await coordinate()).outcome).toBe('completed');
    // Stage 1 has no sink of its own: its transactions take the default timeout of 15 minutes.
    time.now += 901_000;
    const report = await commit();
    expect(report.rollbacks).toHaveLength(1);
    const record = await coordinator.get();
    expect(record.committed).toBe(1);
    // Stage 1's output below its checkpoint-1 watermark is gone until the replay commits: later stages must not rely on it.
    expect(record.committedWatermarks['stage-1'] ?? Number.MIN_SAFE_INTEGER).toBeLessThan(record.completedWatermarks['stage-1'] ?? 0);

    // Stage 2 moves first, before stage 1 has rolled back and replayed.
    for (const target of shards) if (target.stageId === 'stage-2') await tick(target);

    // From here on, ticks and deliveries as a mapping would make them, until everything is
    // committed (checkpoints every second, well within the sink's 4 s transaction timeout).
    for (let round = 0; round < 20; round++) {
      time.now += 1_500;
      await coordinate();
      await commit();
      for (const target of shards) {
        const offset = runtimeProgressOf((await store.peek(shardRefOf(plan, target)))?.progress).offset ?? 0;
        const { records } = await kafka.reader.readAvailable(target.topic, target.partition, offset, 100);
        if (records.length > 0) await invoke(target, records);
      }
    }
    const written = kafka.committedRecords('held-out').map((r) => JSON.parse(r.value?.toString() ?? 'null') as Total);
    expect(compareOutput('two-stage', written, expectedOutput('two-stage', orders))).toEqual([]);
  });
});

describe('a stale coordinator', () => {
  it("never rewrites a committed checkpoint's manifest from shard records read after it moved on", async () => {
    const { time, clock, kafka, plan, store, coordinator, snapshots, processor, shards } = await onTwins({ name: 'late', window: minutes(5) });
    const start = time.now - 3_600_000;
    const orders = [order(0, start), order(1, start + 400_000), order(2, start + 800_000)];
    appendOrders(kafka, orders);
    const deliver = async (from: number, to: number) =>
      processor.processShard('stage-1', 'orders', 0, await kafka.reader.read({ topic: 'orders', partition: 0, from, to }));
    const tick = () => Promise.resolve();
    const manifestState = async () => (await readManifest(snapshots, checkpointManifestKey(1)))?.shards.map((s) => s.state);

    await runCoordinator({ plan, store, coordinator, shards, tick, clock, snapshots }); // triggers checkpoint 1
    await deliver(0, 2);
    // A coordinator reads the record while checkpoint 1 is in flight, then stalls.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached: () => void = () => undefined;
    const readTheRecord = new Promise<void>((resolve) => (reached = resolve));
    let reads = 0;
    const staleStore = {
      get: async () => {
        const record = await coordinator.get();
        if (reads++ === 0) {
          reached();
          await held;
        }
        return record;
      },
      update: (record: Parameters<MemoryCoordinatorStore['update']>[0]) => coordinator.update(record),
    };
    time.now += 1_000;
    const stale = runCoordinator({ plan, store, coordinator: staleStore, shards, tick, clock, snapshots });
    await readTheRecord;
    // Another completes checkpoint 1, it is committed, and the shard's next commit drops its deltas.
    expect((await runCoordinator({ plan, store, coordinator, shards, tick, clock, snapshots })).outcome).toBe('completed');
    await commitCompletedCheckpoints({ plan, store, coordinator, committer: kafka.committer, shards, snapshots });
    const written = await manifestState();
    expect(written?.[0]?.length).toBeGreaterThan(0);
    await deliver(2, 3);

    release();
    expect((await stale).outcome).toBe('waiting');
    expect(await manifestState()).toEqual(written);
  });
});
