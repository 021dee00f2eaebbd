import type { RuntimeContext } from '../api/functions.js';
import {
  StateVisibility,
  UpdateType,
  type ListState,
  type ListStateDescriptor,
  type MapState,
  type MapStateDescriptor,
  type ReducingState,
  type ReducingStateDescriptor,
  type StateTtlConfig,
  type ValueState,
  type ValueStateDescriptor,
} from '../api/state.js';
import type { OperatorServices } from './operator.js';

/** A value with the processing time it was last written (or read, with OnReadAndWrite). */
interface Stamped<T> {
  v: T;
  t: number;
}

/**
 * Reads and writes of one stamped value under a TTL: expired values are invisible (or, with
 * ReturnExpiredIfNotCleanedUp, visible until removed).
 */
class Ttl {
  constructor(
    private readonly config: StateTtlConfig,
    private readonly now: () => number,
  ) {}

  stamp<T>(value: T): Stamped<T> {
    return { v: value, t: this.now() };
  }

  expired(stamped: Stamped<unknown>): boolean {
    return this.now() - stamped.t >= this.config.ttlMs;
  }

  /** The value if visible, refreshing its stamp on read when so configured. */
  read<T>(stamped: Stamped<T> | undefined): { value: T; refreshed: boolean } | undefined {
    if (!stamped) return undefined;
    if (this.expired(stamped) && this.config.stateVisibility === StateVisibility.NeverReturnExpired) return undefined;
    if (this.config.updateType === UpdateType.OnReadAndWrite) {
      stamped.t = this.now();
      return { value: stamped.v, refreshed: true };
    }
    return { value: stamped.v, refreshed: false };
  }
}

/** Where a state of an operator is kept for each key: the operator's name, then the state's. */
export function stateId(services: OperatorServices, name: string): string {
  return `${services.operatorName}/${name}`;
}

function ttlOf(services: OperatorServices, config: StateTtlConfig | undefined): Ttl | undefined {
  return config ? new Ttl(config, () => services.processingTime()) : undefined;
}

export function valueState<T>(
  services: OperatorServices,
  descriptor: Pick<ValueStateDescriptor<T>, 'name' | 'ttl' | 'defaultValue'>,
): ValueState<T> {
  const id = stateId(services, descriptor.name);
  const ttl = ttlOf(services, descriptor.ttl);
  const key = () => services.currentKey();
  return {
    value() {
      const stored = services.state.get(id, key());
      if (!ttl) return stored === undefined ? descriptor.defaultValue : (stored as T);
      const visible = ttl.read(stored as Stamped<T> | undefined);
      if (!visible) {
        if (stored !== undefined) services.state.remove(id, key());
        return descriptor.defaultValue;
      }
      if (visible.refreshed) services.state.put(id, key(), stored);
      return visible.value;
    },
    update(value) {
      services.state.put(id, key(), ttl ? ttl.stamp(value) : value);
    },
    clear() {
      services.state.remove(id, key());
    },
  };
}

type StoredMap<V> = Record<string, V | Stamped<V>>;

export function mapState<K extends string | number, V>(
  services: OperatorServices,
  descriptor: MapStateDescriptor<K, V>,
): MapState<K, V> {
  const id = stateId(services, descriptor.name);
  const ttl = ttlOf(services, descriptor.ttl);
  const key = () => services.currentKey();
  const load = (): StoredMap<V> => (services.state.get(id, key()) as StoredMap<V> | undefined) ?? {};
  const save = (map: StoredMap<V>) => {
    if (Object.keys(map).length === 0) services.state.remove(id, key());
    else services.state.put(id, key(), map);
  };
  /** The visible entries, dropping expired ones from the stored map. */
  const visible = (): [string, V][] => {
    const map = load();
    const result: [string, V][] = [];
    let changed = false;
    for (const [entryKey, stored] of Object.entries(map)) {
      if (!ttl) {
        result.push([entryKey, stored as V]);
        continue;
      }
      const read = ttl.read(stored as Stamped<V>);
      if (read) result.push([entryKey, read.value]);
      else delete map[entryKey];
      changed ||= !read || read.refreshed;
    }
    if (changed) save(map);
    return result;
  };
  const encode = (k: K) => JSON.stringify(k);
  const decode = (k: string) => JSON.parse(k) as K;
  const state: MapState<K, V> = {
    get: (k) => visible().find(([entryKey]) => entryKey === encode(k))?.[1],
    put(k, value) {
      const map = load();
      map[encode(k)] = ttl ? ttl.stamp(value) : value;
      save(map);
    },
    putAll(entries) {
      const map = load();
      for (const [k, value] of entries) map[encode(k)] = ttl ? ttl.stamp(value) : value;
      save(map);
    },
    contains: (k) => state.get(k) !== undefined,
    remove(k) {
      const map = load();
      delete map[encode(k)];
      save(map);
    },
    entries: () => visible().map(([k, value]) => [decode(k), value]),
    keys: () => visible().map(([k]) => decode(k)),
    values: () => visible().map(([, value]) => value),
    isEmpty: () => visible().length === 0,
    clear: () => services.state.remove(id, key()),
  };
  return state;
}

export function listState<T>(services: OperatorServices, descriptor: ListStateDescriptor<T>): ListState<T> {
  const id = stateId(services, descriptor.name);
  const ttl = ttlOf(services, descriptor.ttl);
  const key = () => services.currentKey();
  const load = (): (T | Stamped<T>)[] => (services.state.get(id, key()) as (T | Stamped<T>)[] | undefined) ?? [];
  const save = (list: (T | Stamped<T>)[]) => {
    if (list.length === 0) services.state.remove(id, key());
    else services.state.put(id, key(), list);
  };
  const wrap = (value: T) => (ttl ? ttl.stamp(value) : value);
  return {
    get() {
      const stored = load();
      if (!ttl) return [...(stored as T[])];
      const kept: Stamped<T>[] = [];
      const values: T[] = [];
      for (const item of stored as Stamped<T>[]) {
        const read = ttl.read(item);
        if (read) {
          kept.push(item);
          values.push(read.value);
        }
      }
      if (kept.length !== stored.length || descriptor.ttl?.updateType === UpdateType.OnReadAndWrite) save(kept);
      return values;
    },
    add(value) {
      save([...load(), wrap(value)]);
    },
    addAll(values) {
      save([...load(), ...[...values].map(wrap)]);
    },
    update(values) {
      save([...values].map(wrap));
    },
    clear() {
      services.state.remove(id, key());
    },
  };
}

export function reducingState<T>(services: OperatorServices, descriptor: ReducingStateDescriptor<T>): ReducingState<T> {
  const value = valueState<T>(services, descriptor);
  return {
    get: () => value.value(),
    add(element) {
      const current = value.value();
      value.update(current === undefined ? element : descriptor.reduceFunction(current, element));
    },
    clear: () => value.clear(),
  };
}

/** The keyed state a user function sees. */
export function runtimeContext(services: OperatorServices): RuntimeContext {
  return {
    getState: (descriptor) => valueState(services, descriptor),
    getMapState: (descriptor) => mapState(services, descriptor),
    getListState: (descriptor) => listState(services, descriptor),
    getReducingState: (descriptor) => reducingState(services, descriptor),
  };
}
