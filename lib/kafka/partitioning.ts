import { Partitioners } from 'kafkajs';

const defaultPartitioner = Partitioners.DefaultPartitioner();

/**
 * The partition Kafka's default partitioner (murmur2 of the key bytes, as the Java client
 * and kafkajs compute it) gives a keyed record: where a key's records land, and so which
 * shard holds its state, for a topic of `partitions` partitions.
 */
export function partitionForKey(key: string, partitions: number): number {
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
    offlineReplicas: [],
    partitionErrorCode: 0,
  }));
  return defaultPartitioner({ topic: '', partitionMetadata, message: { key, value: null } });
}
