/**
 * Keys of keyed state. A key is any JSON value (usually a string or number); its canonical
 * JSON text identifies it in state, timers and repartition topics, and its key group — a
 * stable hash modulo the pipeline's max parallelism — decides where it lives, so that state
 * can be redistributed when a stage's shard count changes (as Flink's key groups do).
 */
export interface KeyRef {
  readonly value: unknown;
  readonly serialized: string;
  readonly keyGroup: number;
}

export function keyRef(value: unknown, maxParallelism: number): KeyRef {
  const serialized = JSON.stringify(value) as string | undefined;
  if (serialized === undefined || typeof value === 'function' || (typeof value === 'number' && !Number.isFinite(value))) {
    throw new Error(`A key must be a string, number, boolean or JSON value, not ${String(value)}`);
  }
  return { value, serialized, keyGroup: keyGroupOf(serialized, maxParallelism) };
}

/** The key as Kafka record-key text: strings as they are, anything else as JSON. */
export function keyAsRecordKey(key: KeyRef): string {
  return typeof key.value === 'string' ? key.value : key.serialized;
}

/** FNV-1a over the UTF-16 code units: stable across processes and versions. */
export function stableHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function keyGroupOf(serializedKey: string, maxParallelism: number): number {
  return stableHash(serializedKey) % maxParallelism;
}
