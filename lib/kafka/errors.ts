import type { TransactionHandle } from './transaction-handle.js';

/**
 * The broker no longer holds a transaction that Sluice pre-committed: it was aborted (its
 * timeout passed, or a newer producer initialised the transactional id) or its id expired.
 * Its records will never become visible. This is data loss unless the writer's input is
 * replayed from the last complete checkpoint, so it is never reported as success.
 */
export class TransactionLostError extends Error {
  override readonly name = 'TransactionLostError';

  constructor(
    readonly handle: TransactionHandle,
    readonly reason: string,
  ) {
    super(
      `Transaction ${describeHandle(handle)} is lost: ${reason}. Its records were never committed; ` +
        `replay its input from the last complete checkpoint.`,
    );
  }
}

/** An abort was asked for a transaction that the broker has already committed. */
export class TransactionAlreadyCommittedError extends Error {
  override readonly name = 'TransactionAlreadyCommittedError';

  constructor(readonly handle: TransactionHandle) {
    super(`Transaction ${describeHandle(handle)} is already committed and cannot be aborted.`);
  }
}

/**
 * Topics a request named do not exist. Sluice creates no topic a deployed pipeline writes (the
 * local broker, like a careful cluster, creates none on first use either), so that a misspelled
 * name fails here instead of filling a new topic nobody reads.
 */
export class MissingTopicsError extends Error {
  override readonly name = 'MissingTopicsError';

  constructor(
    readonly topics: readonly string[],
    cause: unknown,
  ) {
    super(
      `${topics.length === 1 ? 'Topic' : 'Topics'} ${topics.join(', ')} ${topics.length === 1 ? 'does' : 'do'} not exist on the brokers. ` +
        `Create ${topics.length === 1 ? 'it' : 'them'} (kafka-topics.sh --create --topic <name> --partitions <n>), or fix the name in the pipeline.`,
      { cause },
    );
  }
}

export function describeHandle({ transactionalId, producerId, producerEpoch }: TransactionHandle): string {
  return `"${transactionalId}" (producer ${producerId}, epoch ${producerEpoch})`;
}

const UNKNOWN_CODE = /Unknown error code (\d+)/;

/**
 * The Kafka error code behind a kafkajs error. kafkajs reports codes newer than it knows
 * (PRODUCER_FENCED, TRANSACTIONAL_ID_NOT_FOUND, ...) as code -99 with the real one only in
 * the message, so both places are read.
 */
export function kafkaErrorCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'number' && code !== -99) return code;
  const fromMessage = typeof message === 'string' ? UNKNOWN_CODE.exec(message)?.[1] : undefined;
  return fromMessage === undefined ? undefined : Number(fromMessage);
}

/** Kafka protocol error codes that lib/kafka acts on. */
export const ErrorCode = {
  NONE: 0,
  NOT_LEADER_OR_FOLLOWER: 6,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  INVALID_PRODUCER_EPOCH: 47,
  INVALID_TXN_STATE: 48,
  INVALID_PRODUCER_ID_MAPPING: 49,
  INVALID_TRANSACTION_TIMEOUT: 50,
  CONCURRENT_TRANSACTIONS: 51,
  PRODUCER_FENCED: 90,
  TRANSACTIONAL_ID_NOT_FOUND: 105,
} as const;

/** Errors of EndTxn, Produce or AddPartitionsToTxn that mean the transaction under a handle is gone. */
const TRANSACTION_LOST_CODES = new Set<number>([
  ErrorCode.INVALID_PRODUCER_EPOCH,
  ErrorCode.PRODUCER_FENCED,
  ErrorCode.INVALID_TXN_STATE,
  ErrorCode.INVALID_PRODUCER_ID_MAPPING,
]);

/** The error code of `error` if it says the transaction was aborted or fenced, else undefined. */
export function transactionLostCode(error: unknown): number | undefined {
  const code = kafkaErrorCode(error);
  return code !== undefined && TRANSACTION_LOST_CODES.has(code) ? code : undefined;
}

/**
 * Runs `request` again while it fails with an error kafkajs marks retriable (a leader
 * moving, a coordinator loading, a topic not yet hosted), backing off, until `deadlineMs`.
 */
export async function retryWhileRetriable<T>(request: () => Promise<T>, deadlineMs: number, beforeRetry?: () => Promise<void>): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await request();
    } catch (error) {
      if ((error as { retriable?: unknown }).retriable !== true || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 2_000)));
      await beforeRetry?.();
    }
  }
}
