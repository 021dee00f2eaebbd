// One step of a transaction, run as its own OS process by the cross-process tests. It
// prints a JSON result and exits without committing anything it did not commit on purpose.
import {
  abortTransaction,
  commitTransaction,
  TransactionalWriter,
  TransactionLostError,
  type OpenTransaction,
  type TransactionHandle,
} from '../../lib/kafka/index.js';

interface Step {
  brokers: string[];
  action: 'write' | 'resume' | 'commit' | 'abort';
  transactionalId?: string;
  topic?: string;
  from?: number;
  count?: number;
  transactionTimeoutMs?: number;
  handle?: TransactionHandle;
  open?: OpenTransaction;
}

const step = JSON.parse(process.argv[2] ?? '{}') as Step;
const { brokers } = step;

function records(topic: string, from: number, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    topic,
    key: `key-${from + i}`,
    value: `value-${from + i}`,
  }));
}

async function main(): Promise<unknown> {
  switch (step.action) {
    case 'write': {
      const { writer, aborted } = await TransactionalWriter.begin({
        brokers,
        transactionalId: step.transactionalId ?? '',
        transactionTimeoutMs: step.transactionTimeoutMs ?? 60_000,
        reportAborted: true,
      });
      await writer.write(records(step.topic ?? '', step.from ?? 0, step.count ?? 0));
      const handle = await writer.preCommit();
      const open = writer.openTransaction();
      await writer.close();
      return { handle, open, aborted: aborted ?? null };
    }
    case 'resume': {
      const open = step.open as OpenTransaction;
      const writer = await TransactionalWriter.resume(
        { brokers, transactionalId: open.handle.transactionalId, transactionTimeoutMs: 60_000 },
        open,
      );
      await writer.write(records(step.topic ?? '', step.from ?? 0, step.count ?? 0));
      const handle = await writer.preCommit();
      await writer.close();
      return { handle, open: writer.openTransaction() };
    }
    case 'commit':
    case 'abort': {
      const handle = step.handle as TransactionHandle;
      try {
        const outcome =
          step.action === 'commit' ? await commitTransaction(handle, { brokers }) : await abortTransaction(handle, { brokers });
        return { outcome };
      } catch (error) {
        if (error instanceof TransactionLostError) return { lost: error.message };
        throw error;
      }
    }
  }
}

process.stdout.write(JSON.stringify(await main()));
