// A pipeline at rest, on the simulation's twins: once checkpoints find nothing changed and
// nothing to commit, the coordinator turns its schedule off and triggers nothing; the first
// batch of input calls it and it wakes, whichever way that batch's commit and the coordinator's
// last look interleave, and the output stays exact.
import { describe, expect, it } from 'vitest';
import { minutes } from '../../lib/api/index.js';
import { runCoordinator, type CoordinatorOutcome } from '../../lib/runtime/coordinator.js';
import { commitCompletedCheckpoints } from '../../lib/runtime/commit-function.js';
import type { ShardTarget } from '../../lib/runtime/shard-record.js';
import { RESTING_CHECKPOINTS, type CoordinatorSchedule } from '../../lib/runtime/quiescence.js';
import type { CoordinatorStore } from '../../lib/state/coordinator-store.js';
import type { ShardStore } from '../../lib/state/shard-store.js';
import { expectedTotals, type GeneratedOrder } from '../helpers/orders.js';
import type { Total } from '../helpers/pipelines.js';
import { deliverOrders, onTwins } from '../helpers/twins.js';

class RecordingSchedule implements CoordinatorSchedule {
  paused = false;
  readonly calls: string[] = [];

  pause(): Promise<void> {
    this.paused = true;
    this.calls.push('pause');
    return Promise.resolve();
  }

  resume(): Promise<void> {
    this.paused = false;
    this.calls.push('resume');
    return Promise.resolve();
  }
}

async function restingPipeline() {
  const schedule = new RecordingSchedule();
  const calls = { count: 0 };
  const twins = await onTwins(
    { name: 'rest', window: minutes(1) },
    {
      callCoordinator: () => {
        calls.count++;
        return Promise.resolve();
      },
    },
  );
  const { time, clock, kafka, plan, store, coordinator, processorsView, snapshots, processor, shards } = twins;
  const [target] = shards;
  if (!target) throw new Error('no shard');
  const start = time.now - 3_600_000;
  const order = (i: number, offsetMs: number): GeneratedOrder => ({ orderId: `o-${i}`, category: 'books', amount: 10 + i, timestamp: start + offsetMs, late: false });
  const deliver = (orders: readonly GeneratedOrder[]) => deliverOrders(kafka, processor, target, orders);
  const tick = async (t: ShardTarget) => {
    await processor.processShard(t.stageId, t.topic, t.partition, []);
  };
  const coordinate = async (
    options: { store?: ShardStore; coordinator?: CoordinatorStore; tick?: (t: ShardTarget) => Promise<void> } = {},
  ): Promise<CoordinatorOutcome> => {
    time.now += 10_000;
    const { outcome, record } = await runCoordinator({
      plan,
      store: options.store ?? store,
      coordinator: options.coordinator ?? coordinator,
      shards,
      tick: options.tick ?? tick,
      clock,
      snapshots,
      schedule,
    });
    if (outcome === 'completed' || record.completed > record.committed) {
      await commitCompletedCheckpoints({ plan, store, coordinator, committer: kafka.committer, shards, snapshots });
    }
    return outcome;
  };
  /** Coordinator runs until it rests; the number of runs it took. */
  const untilAsleep = async () => {
    for (let runs = 1; runs <= 30; runs++) if ((await coordinate()) === 'asleep') return runs;
    throw new Error('the coordinator did not go to rest in 30 runs');
  };
  const totals = () =>
    new Map(
      kafka
        .committedRecords('rest-out')
        .map((r) => JSON.parse(r.value?.toString() ?? 'null') as Total)
        .map((t) => [`${t.category}@${t.windowStart}`, t.amount]),
    );
  return { schedule, calls, coordinator, processorsView, store, order, deliver, tick, target, coordinate, untilAsleep, totals };
}

describe('a pipeline at rest', () => {
  it('turns its schedule off once checkpoints find nothing changed, and the first input turns it on; the output stays exact', async () => {
    const { schedule, calls, coordinator, order, deliver, coordinate, untilAsleep, totals } = await restingPipeline();
    const first = [order(0, 0), order(1, 20_000), order(2, 70_000), order(3, 130_000)];
    await deliver(first);
    expect(await untilAsleep()).toBeLessThanOrEqual(12);
    expect(schedule.paused).toBe(true);
    const resting = await coordinator.get();
    expect(resting).toMatchObject({ asleep: true, committed: resting.triggered });
    // The windows the watermark closed are all out, committed: resting loses nothing.
    expect(totals()).toEqual(expectedTotals(first.slice(0, 3), minutes(1)));
    for (let run = 0; run < 5; run++) expect(await coordinate()).toBe('asleep');
    expect((await coordinator.get()).triggered).toBe(resting.triggered);

    const second = [order(4, 200_000), order(5, 600_000)];
    await deliver(second);
    // The batch called the coordinator: that run finds the shard moved, wakes, schedule and all, and checkpoints it.
    expect(calls.count).toBe(1);
    expect(await coordinate()).toBe('triggered');
    expect(schedule.paused).toBe(false);
    expect((await coordinator.get()).asleep).toBeUndefined();
    await untilAsleep();
    expect(totals()).toEqual(expectedTotals([...first, ...second].slice(0, 5), minutes(1)));
  });

  it('stays awake when a batch commits before its last look at the shards', async () => {
    const { schedule, coordinator, order, deliver, coordinate, untilAsleep } = await restingPipeline();
    await deliver([order(0, 0), order(1, 70_000)]);
    await untilAsleep();
    await deliver([order(2, 130_000)]);
    expect(await coordinate()).toBe('triggered');
    // Run it up to where it would rest again, then let a batch commit just as it says it rests.
    let outcome: CoordinatorOutcome | undefined;
    const batch = { overtaken: false };
    for (let run = 0; run < 30 && !batch.overtaken; run++) {
      outcome = await coordinate({
        coordinator: {
          get: () => coordinator.get(),
          update: async (record) => {
            const updated = await coordinator.update(record);
            if (updated && record.asleep && !batch.overtaken) {
              batch.overtaken = true;
              await deliver([order(3, 200_000)]);
            }
            return updated;
          },
        },
      });
    }
    // Its look at the shards saw the batch: it woke in the same run and checkpointed it.
    expect(batch.overtaken).toBe(true);
    expect(outcome).toBe('triggered');
    expect((await coordinator.get()).asleep).toBeUndefined();
    expect(schedule.paused).toBe(false);
  });

  it('is looked for after its commit only by a batch that started when the coordinator could rest before seeing it', async () => {
    const { schedule, calls, coordinator, processorsView, order, deliver, tick, target, coordinate, untilAsleep, totals } = await restingPipeline();
    const first = [order(0, 0), order(1, 70_000)];
    await deliver(first);
    await untilAsleep();
    const second = [order(2, 130_000)];
    await deliver(second);
    expect(calls.count).toBe(1);
    // Awake again: checkpoints count anew the completions that find the pipeline unchanged. A
    // busy pipeline's batch starts with at most one counted, and reads the record at its start only.
    expect(await coordinate()).toBe('triggered');
    const busy = [order(3, 140_000)];
    let readsBefore = processorsView.reads;
    await deliver(busy);
    expect(processorsView.reads - readsBefore).toBe(1);
    let record = await coordinator.get();
    for (let run = 0; run < 30 && !(record.resting?.checkpoints === RESTING_CHECKPOINTS - 1 && record.committed === record.triggered); run++) {
      await coordinate();
      record = await coordinator.get();
    }
    expect(record.resting?.checkpoints).toBe(RESTING_CHECKPOINTS - 1);

    // The next checkpoint is triggered, and the shard acknowledges it without moving (a tick).
    expect(await coordinate({ tick: () => Promise.resolve() })).toBe('triggered');
    await tick(target);
    // A batch starts now, and the last completion the coordinator needs comes while it runs:
    // the coordinator completes, its commit function commits, and it goes to rest on the shard
    // as it was before the batch. The batch reads the record after its commit and calls it.
    processorsView.afterRead = async () => {
      expect(await coordinate({ tick: () => Promise.resolve() })).toBe('completed');
      expect(await coordinate({ tick: () => Promise.resolve() })).toBe('asleep');
    };
    readsBefore = processorsView.reads;
    const third = [order(4, 200_000)];
    await deliver(third);
    expect(schedule.paused).toBe(true);
    expect(processorsView.reads - readsBefore).toBe(2);
    expect(calls.count).toBe(2);
    expect(await coordinate()).toBe('triggered');
    await untilAsleep();
    // Every window the last order's watermark closed is out, committed.
    expect(totals()).toEqual(expectedTotals([...first, ...second, ...busy], minutes(1)));
  });

  it('is called by a batch that commits after its last look at the shards, and wakes', async () => {
    const { schedule, calls, coordinator, store, order, deliver, coordinate, untilAsleep } = await restingPipeline();
    await deliver([order(0, 0), order(1, 70_000)]);
    await untilAsleep();
    await deliver([order(2, 130_000)]);
    // Up to its rest, on shard records that a batch then overtakes: the coordinator's last look
    // sees the shard before the batch commits, and the batch sees the coordinator asleep.
    let armed = false;
    const overtaken: ShardStore = {
      claim: (ref) => store.claim(ref),
      read: (claim, keys) => store.read(claim, keys),
      write: (claim, changes) => store.write(claim, changes),
      commit: (claim, progress) => store.commit(claim, progress),
      deleteKeyedState: () => store.deleteKeyedState(),
      peek: async (ref) => {
        const seen = await store.peek(ref);
        if (armed && (await coordinator.get()).asleep) {
          armed = false;
          await deliver([order(3, 200_000)]);
        }
        return seen;
      },
    };
    let outcome: CoordinatorOutcome | undefined;
    for (let run = 0; run < 30 && outcome !== 'asleep'; run++) {
      armed = true;
      outcome = await coordinate({ store: overtaken });
    }
    // It rested on what it saw, but the batch saw it resting and called it.
    expect(outcome).toBe('asleep');
    expect(schedule.paused).toBe(true);
    expect(calls.count).toBeGreaterThan(0);
    expect(await coordinate()).toBe('triggered');
    expect(schedule.paused).toBe(false);
    expect((await coordinator.get()).asleep).toBeUndefined();
  });
});
