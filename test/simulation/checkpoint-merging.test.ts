// When a shard's state objects are merged: after the checkpoint that lists them is committed,
// by the commit function, so that a checkpoint's output waits for no reads of them; by the next
// checkpoint only when the commit function did not get to it.
import { describe, expect, it } from 'vitest';
import { minutes } from '../../lib/api/index.js';
import { runCoordinator } from '../../lib/runtime/coordinator.js';
import { commitCompletedCheckpoints } from '../../lib/runtime/commit-function.js';
import { checkpointManifestKey, readManifest, readShardState, STATE_MERGE_FAN_IN, stateObjectLevel } from '../../lib/snapshot/checkpoint-state.js';
import type { GeneratedOrder } from '../helpers/orders.js';
import { deliverOrders, onTwins } from '../helpers/twins.js';

describe("a checkpoint's state objects", () => {
  it('are listed unmerged when it completes, merged by the commit function after the commit, and merged by the next checkpoint when the commit function did not', async () => {
    // Every delta an object of its own, as a record holding none inline has them.
    const { time, clock, kafka, plan, store, coordinator, snapshots, processor, shards } = await onTwins({ name: 'merging', window: minutes(5) }, { limits: { maxInlineDeltaBytes: 0 } });
    const [target] = shards;
    if (!target) throw new Error('no shard');
    const tick = () => Promise.resolve();
    const start = time.now - 3_600_000;
    let sent = 0;
    /** One batch of one order for a category of its own: each batch writes a state delta. */
    const deliverBatches = async (count: number) => {
      for (let i = 0; i < count; i++, sent++) {
        const order: GeneratedOrder = { orderId: `o-${sent}`, category: `category-${sent}`, amount: 10 + sent, timestamp: start + sent * 1_000, late: false };
        await deliverOrders(kafka, processor, target, [order]);
      }
    };
    const coordinatorRun = () => runCoordinator({ plan, store, coordinator, shards, tick, clock, snapshots });
    const chainOf = async (checkpoint: number) => (await readManifest(snapshots, checkpointManifestKey(checkpoint)))?.shards[0]?.state ?? [];
    const stateOf = async (chain: readonly string[]) => [...(await readShardState(snapshots, chain, plan.maxParallelism)).keys()].sort();
    const checkpoint = async () => {
      expect((await coordinatorRun()).outcome).toBe('triggered');
      await deliverBatches(1);
      time.now += 1_000;
      const readsBefore = snapshots.requests.gets;
      expect((await coordinatorRun()).outcome).toBe('completed');
      return snapshots.requests.gets - readsBefore;
    };

    await deliverBatches(STATE_MERGE_FAN_IN);
    // Completing reads no state object: there is no manifest before the first.
    expect(await checkpoint()).toBe(0);
    const unmerged = await chainOf(1);
    expect(unmerged.map(stateObjectLevel)).toEqual(new Array<number>(STATE_MERGE_FAN_IN + 1).fill(0));
    const categories = await stateOf(unmerged);
    expect(categories).toHaveLength(STATE_MERGE_FAN_IN + 1);

    await commitCompletedCheckpoints({ plan, store, coordinator, committer: kafka.committer, shards, snapshots });
    expect((await coordinator.get()).committed).toBe(1);
    const merged = await chainOf(1);
    expect(merged.map(stateObjectLevel)).toEqual([1]);
    expect(await stateOf(merged)).toEqual(categories);

    // The next checkpoint reads only the manifest it builds on.
    time.now += minutes(1);
    await deliverBatches(STATE_MERGE_FAN_IN - 1);
    expect(await checkpoint()).toBe(1);
    expect((await chainOf(2)).map(stateObjectLevel)).toEqual([1, ...new Array<number>(STATE_MERGE_FAN_IN).fill(0)]);
    // A commit function that merges nothing (it stopped after the commit): the chain stays as the checkpoint listed it.
    await commitCompletedCheckpoints({ plan, store, coordinator, committer: kafka.committer, shards });
    expect((await chainOf(2)).map(stateObjectLevel)).toEqual([1, ...new Array<number>(STATE_MERGE_FAN_IN).fill(0)]);

    // So the checkpoint that builds on it merges it, before it completes.
    time.now += minutes(1);
    await deliverBatches(1);
    expect(await checkpoint()).toBeGreaterThan(STATE_MERGE_FAN_IN);
    const third = await chainOf(3);
    expect(third.map(stateObjectLevel)).toEqual([1, 1]);
    expect(await stateOf(third)).toHaveLength(sent);
  });
});
