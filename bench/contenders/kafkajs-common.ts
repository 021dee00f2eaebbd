// What the hand-written kafkajs contenders share: running a consumer until it has seen the
// whole input.
import type { Batch, Consumer } from 'kafkajs';

/** Runs `consumer`, handing each batch to `handle`, until `total` records were handled. */
export function consumeUntil(consumer: Consumer, total: number, handle: (batch: Batch) => Promise<void>, autoCommit = true): Promise<void> {
  let consumed = 0;
  return new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit,
        eachBatch: async ({ batch }) => {
          await handle(batch);
          consumed += batch.messages.length;
          if (consumed >= total) resolve();
        },
      })
      .catch(reject);
  });
}
