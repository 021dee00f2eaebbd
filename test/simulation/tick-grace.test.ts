// A coordinator that runs often while a checkpoint is in flight leaves the shards a while to
// acknowledge it with their own batches before it ticks them: a tick claims its shard, and would
// fence a batch on its way. On the simulation's twins, with a clock the test moves by hand.
import { describe, expect, it } from 'vitest';
import { minutes } from '../../lib/api/index.js';
import { runCoordinator } from '../../lib/runtime/coordinator.js';
import { commitCompletedCheckpoints } from '../../lib/runtime/commit-function.js';
import { type ShardTarget } from '../../lib/runtime/shard-record.js';
import { deliverOrders, onTwins } from '../helpers/twins.js';

describe('ticks after a grace', () => {
  it('completes a checkpoint that every shard acknowledged by itself without a tick, and ticks a shard that stays behind once the grace is over', async () => {
    const { time, clock, kafka, plan, store, coordinator, snapshots, processor, shards } = await onTwins({ name: 'grace', window: minutes(1) });
    const [target] = shards;
    if (!target) throw new Error('no shard');
    const ticked: ShardTarget[] = [];
    const coordinate = () =>
      runCoordinator({
        plan,
        store,
        coordinator,
        shards,
        snapshots,
        clock,
        tickAfterMs: 1_000,
        tick: async (t) => {
          ticked.push(t);
          await processor.processShard(t.stageId, t.topic, t.partition, []);
        },
      });
    let delivered = 0;
    const deliver = async () => {
      const order = { orderId: `o-${delivered++}`, category: 'books', amount: 10, timestamp: time.now - 60_000 };
      await deliverOrders(kafka, processor, target, [order]);
    };

    await deliver();
    expect((await coordinate()).outcome).toBe('triggered');
    time.now += 100;
    expect((await coordinate()).outcome, 'within the grace, the lagging shard is left to its batches').toBe('waiting');
    time.now += 100;
    await deliver();
    expect((await coordinate()).outcome, 'acknowledged by its batch').toBe('completed');
    expect(ticked).toEqual([]);
    await commitCompletedCheckpoints({ plan, store, coordinator, committer: kafka.committer, shards, snapshots });

    time.now += 10_000;
    expect((await coordinate()).outcome).toBe('triggered');
    time.now += 999;
    expect((await coordinate()).outcome).toBe('waiting');
    expect(ticked).toEqual([]);
    time.now += 1;
    expect((await coordinate()).outcome, 'the grace over, the shard is ticked').toBe('completed');
    expect(ticked).toEqual([target]);
  });
});
