import type { Plan } from '../plan/plan.js';
import type { ShardStore } from '../state/shard-store.js';
import { shardRefOf, type ShardTarget } from './shard-record.js';
import { runtimeProgressOf } from './shard-record.js';
import type { ShardFailure } from './shard-record.js';

export interface ResumedShard extends ShardTarget {
  /** What the shard had failed at: it tries that record again, with all the policy's attempts. */
  readonly failure: ShardFailure;
}

/**
 * `sluice resume`: forgets the failed attempts of every shard that has them, so that a shard
 * stopped at a record tries it again (after a fix of the function, or of the policy). Each is
 * a claim and a commit of the shard's progress without its failure, so a running invocation is
 * fenced as by any newer one; the shard reads what it stopped before from the log.
 */
export async function resumeFailedShards(options: {
  readonly plan: Plan;
  readonly store: ShardStore;
  readonly shards: readonly ShardTarget[];
}): Promise<ResumedShard[]> {
  const { plan, store } = options;
  const resumed: ResumedShard[] = [];
  for (const target of options.shards) {
    const ref = shardRefOf(plan, target);
    if (!runtimeProgressOf((await store.peek(ref))?.progress).failure) continue;
    const claim = await store.claim(ref);
    const { failure, ...progress } = runtimeProgressOf(claim.progress);
    if (!failure) continue;
    await store.commit(claim, progress);
    resumed.push({ ...target, failure });
  }
  return resumed;
}
