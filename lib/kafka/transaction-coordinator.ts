import type Cluster from 'kafkajs/src/cluster/index.js';
import type { Broker } from 'kafkajs/src/cluster/index.js';
import { describeTransactions, type TransactionDescription } from './describe-transactions.js';
import { ErrorCode, kafkaErrorCode } from './errors.js';

/** FindCoordinator's key types: consumer groups and transactional ids. */
const GROUP_COORDINATOR = 0;
const TRANSACTION_COORDINATOR = 1;

/** Errors after which the same request succeeds once the coordinator settles or is found again. */
const TRANSIENT_CODES = new Set<number>([
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.CONCURRENT_TRANSACTIONS,
]);

export interface CoordinatorRetry {
  /** How long to keep retrying transient coordinator errors. */
  readonly deadlineMs: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
}

export const DEFAULT_COORDINATOR_RETRY: CoordinatorRetry = {
  deadlineMs: 60_000,
  initialBackoffMs: 20,
  maxBackoffMs: 1_000,
};

/**
 * Each cluster's coordinators, by key type and key, as FindCoordinator last answered: a shard's
 * transaction takes several requests to its id's coordinator (InitProducerId, AddPartitionsToTxn,
 * EndTxn), and a Lambda container reuses its ids, so asking once saves a round trip each. A
 * failed request forgets the entry, so a coordinator that moved is found again.
 */
const knownCoordinators = new WeakMap<Cluster, Map<string, number>>();

function coordinatorsOf(cluster: Cluster): Map<string, number> {
  let known = knownCoordinators.get(cluster);
  if (!known) knownCoordinators.set(cluster, (known = new Map<string, number>()));
  return known;
}

async function coordinatorOf(cluster: Cluster, key: string, coordinatorType: number, entry: string): Promise<Broker> {
  const known = coordinatorsOf(cluster);
  const nodeId = known.get(entry);
  if (nodeId !== undefined) return cluster.findBroker({ nodeId });
  const coordinator = await cluster.findGroupCoordinator({ groupId: key, coordinatorType });
  known.set(entry, coordinator.nodeId);
  return coordinator;
}

/**
 * Runs `request` against the coordinator of `key` (a group, or a transactional id), finding
 * it again and backing off while it answers with a transient error (a commit completing, a
 * coordinator moving or loading its log).
 */
async function withCoordinator<T>(
  cluster: Cluster,
  key: string,
  coordinatorType: number,
  request: (coordinator: Broker) => Promise<T>,
  retry: CoordinatorRetry,
): Promise<T> {
  const deadline = Date.now() + retry.deadlineMs;
  let backoff = retry.initialBackoffMs;
  const entry = `${coordinatorType}:${key}`;
  for (;;) {
    try {
      return await request(await coordinatorOf(cluster, key, coordinatorType, entry));
    } catch (error) {
      coordinatorsOf(cluster).delete(entry);
      const code = kafkaErrorCode(error);
      if (code === undefined || !TRANSIENT_CODES.has(code) || Date.now() + backoff > deadline) throw error;
      if (code === ErrorCode.NOT_COORDINATOR) await cluster.refreshMetadata();
      await new Promise((resolve) => setTimeout(resolve, backoff));
      backoff = Math.min(backoff * 2, retry.maxBackoffMs);
    }
  }
}

/** {@link withCoordinator} for the transaction coordinator of `transactionalId`. */
export function withTransactionCoordinator<T>(
  cluster: Cluster,
  transactionalId: string,
  request: (coordinator: Broker) => Promise<T>,
  retry: CoordinatorRetry = DEFAULT_COORDINATOR_RETRY,
): Promise<T> {
  return withCoordinator(cluster, transactionalId, TRANSACTION_COORDINATOR, request, retry);
}

/**
 * Commits a consumer group's offsets without joining the group (generation -1, no member id:
 * the broker accepts such commits for a group with no active members), as Lambda's event
 * source mapping keeps them. kafkajs's admin setOffsets would join the group with a consumer.
 */
export async function commitGroupOffsets(
  cluster: Cluster,
  groupId: string,
  topic: string,
  offsets: ReadonlyMap<number, number>,
): Promise<void> {
  const partitions = [...offsets].map(([partition, offset]) => ({ partition, offset: String(offset) }));
  await withCoordinator(
    cluster,
    groupId,
    GROUP_COORDINATOR,
    (coordinator) => coordinator.offsetCommit({ groupId, groupGenerationId: -1, memberId: '', topics: [{ topic, partitions }] }),
    DEFAULT_COORDINATOR_RETRY,
  );
}

/** The coordinator's view of one transactional id; undefined when the broker does not know it. */
export async function describeTransaction(
  cluster: Cluster,
  transactionalId: string,
): Promise<TransactionDescription | undefined> {
  const description = await withTransactionCoordinator(cluster, transactionalId, async (coordinator) => {
    const [state] = await describeTransactions(coordinator, [transactionalId]);
    if (!state) throw new Error(`DescribeTransactions returned nothing for "${transactionalId}"`);
    if (TRANSIENT_CODES.has(state.errorCode)) throw Object.assign(new Error('transient'), { code: state.errorCode });
    return state;
  });
  if (description.errorCode === ErrorCode.TRANSACTIONAL_ID_NOT_FOUND) return undefined;
  if (description.errorCode !== ErrorCode.NONE) {
    throw new Error(`DescribeTransactions for "${transactionalId}" failed with Kafka error code ${description.errorCode}`);
  }
  return description;
}
