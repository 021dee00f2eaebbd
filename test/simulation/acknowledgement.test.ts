// Which batch acknowledges a checkpoint: one that was running when the coordinator triggered it
// acknowledges it, as a batch that started after the trigger does, so that the checkpoint does
// not wait for the shard's next batch.
import { describe, expect, it } from 'vitest';
import { minutes } from '../../lib/api/index.js';
import { runCoordinator } from '../../lib/runtime/coordinator.js';
import { shardRefOf } from '../../lib/runtime/shard-record.js';
import { runtimeProgressOf } from '../../lib/runtime/shard-record.js';
import type { GeneratedOrder } from '../helpers/orders.js';
import { deliverOrders, onTwins } from '../helpers/twins.js';

const order = (i: number, timestamp: number): GeneratedOrder => ({ orderId: `o-${i}`, category: 'books', amount: 10 + i, timestamp, late: false });

describe('a checkpoint triggered while a batch runs', () => {
  it('is acknowledged by that batch, whose output it then covers', async () => {
    const { time, clock, kafka, plan, store, processorsView: coordinator, processor, snapshots, shards } = await onTwins({ name: 'acknowledging', window: minutes(5) });
    const [target] = shards;
    if (!target) throw new Error('no shard');
    const shard = shardRefOf(plan, target);
    const coordinatorRun = () => runCoordinator({ plan, store, coordinator: coordinator.direct, shards, tick: () => Promise.resolve(), clock, snapshots });
    const progress = async () => runtimeProgressOf((await store.peek(shard))?.progress);
    const start = time.now - 3_600_000;
    let sent = 0;
    const deliver = async (timestamps: readonly number[]) => {
      const readsBefore = coordinator.reads;
      const report = await deliverOrders(
        kafka,
        processor,
        target,
        timestamps.map((timestamp) => order(sent++, timestamp)),
      );
      return { ...report, reads: coordinator.reads - readsBefore };
    };
    const triggerAfterRead = () => {
      coordinator.afterRead = async () => {
        coordinator.afterRead = undefined;
        expect((await coordinatorRun()).outcome).toBe('triggered');
      };
    };

    // Checkpoint 1 is due: the coordinator triggers it right after the batch read the record.
    triggerAfterRead();
    const first = await deliver([start, start + 400_000]);
    expect(first.recordsOut).toBe(1);
    // At the start and again beside the outputs; not after the commit, as no checkpoint has
    // found the pipeline unchanged, so the coordinator cannot be going to rest.
    expect(first.reads).toBe(2);
    expect((await progress()).acknowledged).toBe(1);
    expect((await progress()).pending.map((p) => p.checkpoint)).toEqual([1]);
    time.now += 100;
    expect((await coordinatorRun()).outcome).toBe('completed');

    // Checkpoint 2 is not due at the batch's start: nothing is read again, and the shard's next batch acknowledges it.
    time.now += 1_000;
    const notDue = await deliver([start + 800_000]);
    expect(notDue.reads).toBe(1);
    expect((await progress()).acknowledged).toBe(1);
    time.now += plan.checkpointing.intervalMs;
    expect((await coordinatorRun()).outcome).toBe('triggered');
    await deliver([start + 1_200_000]);
    expect((await progress()).acknowledged).toBe(2);
  });
});
