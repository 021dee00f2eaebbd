/**
 * Keyed state, as in Flink: declared with a descriptor, scoped to the key of the element
 * or timer being processed. Values must survive JSON (they are checkpointed).
 */

export const UpdateType = {
  /** The time-to-live restarts when the value is written. */
  OnCreateAndWrite: 'OnCreateAndWrite',
  /** The time-to-live restarts when the value is read or written. */
  OnReadAndWrite: 'OnReadAndWrite',
} as const;
export type UpdateType = (typeof UpdateType)[keyof typeof UpdateType];

export const StateVisibility = {
  NeverReturnExpired: 'NeverReturnExpired',
  ReturnExpiredIfNotCleanedUp: 'ReturnExpiredIfNotCleanedUp',
} as const;
export type StateVisibility = (typeof StateVisibility)[keyof typeof StateVisibility];

/** State time-to-live, measured in processing time (as Flink's is). */
export interface StateTtlConfig {
  readonly ttlMs: number;
  readonly updateType: UpdateType;
  readonly stateVisibility: StateVisibility;
}

export const StateTtlConfig = {
  newBuilder(ttlMs: number) {
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new Error(`State TTL must be a positive duration, not ${ttlMs}`);
    let updateType: UpdateType = UpdateType.OnCreateAndWrite;
    let stateVisibility: StateVisibility = StateVisibility.NeverReturnExpired;
    const builder = {
      setUpdateType(type: UpdateType) {
        updateType = type;
        return builder;
      },
      setStateVisibility(visibility: StateVisibility) {
        stateVisibility = visibility;
        return builder;
      },
      build(): StateTtlConfig {
        return { ttlMs, updateType, stateVisibility };
      },
    };
    return builder;
  },
};

export type StateKind = 'value' | 'map' | 'list' | 'reducing';

abstract class StateDescriptor<S extends StateKind> {
  ttl: StateTtlConfig | undefined;

  constructor(
    readonly name: string,
    readonly kind: S,
  ) {
    if (name.trim() === '') throw new Error('A state descriptor needs a non-empty name');
  }

  /** Expires entries that were not written (or read) within the configured time. */
  enableTimeToLive(ttl: StateTtlConfig): this {
    this.ttl = ttl;
    return this;
  }
}

export class ValueStateDescriptor<T> extends StateDescriptor<'value'> {
  declare readonly valueType?: T;

  constructor(
    name: string,
    readonly defaultValue?: T,
  ) {
    super(name, 'value');
  }
}

export class MapStateDescriptor<K extends string | number, V> extends StateDescriptor<'map'> {
  declare readonly entryType?: [K, V];

  constructor(name: string) {
    super(name, 'map');
  }
}

export class ListStateDescriptor<T> extends StateDescriptor<'list'> {
  declare readonly elementType?: T;

  constructor(name: string) {
    super(name, 'list');
  }
}

/** A value that every `add` folds into with `reduceFunction`, as Flink's `ReducingStateDescriptor`. */
export class ReducingStateDescriptor<T> extends StateDescriptor<'reducing'> {
  constructor(
    name: string,
    readonly reduceFunction: (accumulated: T, value: T) => T,
  ) {
    super(name, 'reducing');
  }
}

export type AnyStateDescriptor =
  | ValueStateDescriptor<unknown>
  | MapStateDescriptor<string | number, unknown>
  | ListStateDescriptor<unknown>
  | ReducingStateDescriptor<unknown>;

export interface ValueState<T> {
  /** The value, or the descriptor's default (undefined without one). */
  value(): T | undefined;
  update(value: T): void;
  clear(): void;
}

export interface MapState<K extends string | number, V> {
  get(key: K): V | undefined;
  put(key: K, value: V): void;
  putAll(entries: Iterable<readonly [K, V]>): void;
  contains(key: K): boolean;
  remove(key: K): void;
  entries(): [K, V][];
  keys(): K[];
  values(): V[];
  isEmpty(): boolean;
  clear(): void;
}

export interface ReducingState<T> {
  /** The reduced value, or undefined before the first `add`. */
  get(): T | undefined;
  add(value: T): void;
  clear(): void;
}

export interface ListState<T> {
  get(): T[];
  add(value: T): void;
  addAll(values: Iterable<T>): void;
  update(values: Iterable<T>): void;
  clear(): void;
}
