// DESIGN.md's layering: the runtime uses plan, operators, state, snapshot and kafka; aws,
// offline and cli use the runtime, never the other way round.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const RUNTIME = join(import.meta.dirname, '../../../lib/runtime');

describe('lib/runtime', () => {
  it('imports nothing from lib/aws, lib/offline or lib/cli', () => {
    const upward = readdirSync(RUNTIME)
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) =>
        [...readFileSync(join(RUNTIME, file), 'utf8').matchAll(/from '(\.\.\/(?:aws|offline|cli)\/[^']+)'/g)].map((m) => `${file}: ${m[1]}`),
      );
    expect(upward).toEqual([]);
  });
});
