import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildOnce } from '../../../lib/offline/cache-folder.js';

const roots: string[] = [];
const cacheRoot = () => {
  const root = mkdtempSync(join(tmpdir(), 'sluice-cache-folder-'));
  roots.push(root);
  return root;
};
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});
const writing = (content: string) => (staging: string) => writeFileSync(join(staging, 'artifact'), content);

describe('buildOnce', () => {
  it('builds a folder the first time and returns the cached one after', () => {
    const folder = join(cacheRoot(), 'tool');
    let builds = 0;
    const build = (staging: string) => {
      builds += 1;
      writing(`build ${builds}`)(staging);
    };

    expect(buildOnce(folder, build)).toBe(folder);
    expect(buildOnce(folder, build)).toBe(folder);

    expect(builds).toBe(1);
    expect(readFileSync(join(folder, 'artifact'), 'utf8')).toBe('build 1');
  });

  it('leaves neither the folder nor its staging behind when the build fails, and rethrows', () => {
    const root = cacheRoot();
    const folder = join(root, 'tool');

    expect(() =>
      buildOnce(folder, (staging) => {
        writing('half')(staging);
        throw new Error('mvn failed');
      }),
    ).toThrow('mvn failed');

    expect(readdirSync(root)).toEqual([]);
  });

  it('builds again over a folder that an interrupted older build left without its marker', () => {
    const folder = join(cacheRoot(), 'tool');
    mkdirSync(folder);
    writeFileSync(join(folder, 'artifact'), 'half');

    buildOnce(folder, writing('whole'));

    expect(readFileSync(join(folder, 'artifact'), 'utf8')).toBe('whole');
  });

  it("takes another builder's folder when that builder renames its build into place first", () => {
    const root = cacheRoot();
    const folder = join(root, 'tool');

    buildOnce(folder, (staging) => {
      writing('slow')(staging);
      buildOnce(folder, writing('fast'));
    });

    expect(readFileSync(join(folder, 'artifact'), 'utf8')).toBe('fast');
    expect(readdirSync(root)).toEqual(['tool']);
    expect(existsSync(join(folder, '.complete'))).toBe(true);
  });
});
