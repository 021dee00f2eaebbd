import type { OffsetsInitializer } from '../api/source.js';
import type { TopicAdmin } from '../kafka/clients.js';

/**
 * Where a shard that has never committed starts reading, per its source's
 * OffsetsInitializer — as Flink's KafkaSource resolves it on a fresh start.
 */
export async function resolveStartingOffset(
  admin: TopicAdmin,
  initializer: OffsetsInitializer,
  groupId: string,
  topic: string,
  partition: number,
): Promise<number> {
  const [description] = await admin.describeTopics([topic]);
  const bounds = description?.partitions.find((p) => p.partition === partition);
  if (!bounds) throw new Error(`Topic "${topic}" has no partition ${partition}`);
  const earliest = Number(bounds.low);
  const latest = Number(bounds.stable);
  switch (initializer.kind) {
    case 'earliest':
      return earliest;
    case 'latest':
      return latest;
    case 'timestamp': {
      const offset = (await admin.offsetsForTimestamp(topic, initializer.timestamp)).get(partition);
      return offset === undefined || offset < 0 ? latest : offset;
    }
    case 'committed': {
      const committed = (await admin.groupOffsets(groupId, topic)).get(partition) ?? -1;
      if (committed >= 0) return Math.max(committed, earliest);
      switch (initializer.resetStrategy) {
        case 'EARLIEST':
          return earliest;
        case 'LATEST':
          return latest;
        case 'NONE':
          throw new Error(
            `Consumer group "${groupId}" has no committed offset for ${topic}-${partition}, and the source's reset ` +
              `strategy is NONE: commit an offset for the group, or use committedOffsets(OffsetResetStrategy.EARLIEST)`,
          );
      }
    }
  }
}
