import type { KafkaRecordSerializationSchema } from '../api/sink.js';
import type { KafkaRecord } from '../kafka/records.js';
import type { Stage } from '../plan/plan.js';

/** Sink serializers opened in this container: each opens once, and again only after a failure. */
const opened = new WeakMap<KafkaRecordSerializationSchema<unknown>, Promise<void>>();

function open(serializer: KafkaRecordSerializationSchema<unknown>): Promise<void> | undefined {
  if (!serializer.open) return undefined;
  let opening = opened.get(serializer);
  if (!opening) {
    opening = serializer.open();
    opened.set(serializer, opening);
    opening.catch(() => opened.delete(serializer));
  }
  return opening;
}

/**
 * Readies a stage's formats for a batch, before its first record is read: the source's
 * deserializer fetches what the records need (a registry's schemas), and each sink's
 * serializer opens. A failure here fails the batch, which is retried; no record is skipped.
 * Undefined when the stage has no such formats: its batches then wait on nothing more.
 */
export function prepareFormats(stage: Stage, records: readonly KafkaRecord[]): Promise<void> | undefined {
  const preparing = stage.nodes.flatMap((node) => {
    if (node.role === 'source') return node.transformation.source.config.deserializer.prepare?.(records) ?? [];
    if (node.role === 'sink') return open(node.transformation.sink.config.serializer) ?? [];
    return [];
  });
  return preparing.length === 0 ? undefined : Promise.all(preparing).then(() => undefined);
}
