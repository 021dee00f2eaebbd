import { describe, expect, it } from 'vitest';
import { TumblingEventTimeWindows } from '../../../lib/api/index.js';
import { MemoryStateBackend } from '../../../lib/state/keyed-state-backend.js';
import { keyGroupOf, keyRef } from '../../../lib/state/keys.js';
import { OperatorTestHarness } from '../../../lib/testing/index.js';

describe('key groups', () => {
  it('are a stable hash of the key’s JSON text, so restored state finds its keys', () => {
    // Pinned: changing the hash would strand every checkpoint taken before the change.
    expect([keyGroupOf('"books"', 128), keyGroupOf('"toys"', 128), keyGroupOf('42', 128)]).toEqual([41, 90, 3]); // FNV-1a, checked against an independent implementation
    expect(keyRef('books', 128)).toEqual({ value: 'books', serialized: '"books"', keyGroup: 41 });
    expect(keyRef(['eu', 7], 16).serialized).toBe('["eu",7]');
  });

  it('spread keys over every group', () => {
    const groups = new Set(Array.from({ length: 5_000 }, (_, i) => keyRef(`customer-${i}`, 128).keyGroup));
    expect(groups.size).toBe(128);
  });

  it('refuse keys that do not survive JSON', () => {
    expect(() => keyRef(undefined, 128)).toThrow(/A key must be a string, number, boolean or JSON value/);
    expect(() => keyRef(Number.NaN, 128)).toThrow(/not NaN/);
  });

  it('partition a backend’s state, so a shard can take over a range of groups', () => {
    const backend = new MemoryStateBackend();
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'].map((k) => keyRef(k, 4));
    for (const key of keys) backend.put('op/count', key, key.value);
    const firstHalf = backend.entriesOfKeyGroups(0, 1).map((e) => e.key).sort();
    const secondHalf = backend.entriesOfKeyGroups(2, 3).map((e) => e.key).sort();
    expect([...firstHalf, ...secondHalf].sort()).toEqual(keys.map((k) => k.serialized).sort());
    expect(firstHalf).toEqual(keys.filter((k) => k.keyGroup <= 1).map((k) => k.serialized).sort());
  });

  it('hold the keyed state that operators write', () => {
    const harness = OperatorTestHarness.of<{ k: string; n: number }, { k: string; n: number }>((input) =>
      input.keyBy((e) => e.k).window(TumblingEventTimeWindows.of(10)).sum('n').name('sums'),
    );
    harness.processElements(['x', 'y'].map((k) => ({ value: { k, n: 1 }, timestamp: 0 })));
    expect([...harness.stateOf('sums', 'windows').keys()].sort()).toEqual(['"x"', '"y"']);
  });
});
