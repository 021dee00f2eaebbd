// `sluice init`: a new project of the user's, from templates/project: a pipeline importing
// `sluice`, its test with the harness, and what they need to run (package.json, tsconfig).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SLUICE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TEMPLATE = join(SLUICE_ROOT, 'templates', 'project');

/** What may be in a folder that is still empty enough to scaffold into. */
const ALLOWED = new Set(['.git']);

/** The folder's name as an npm package name: lower case, what npm allows. */
function packageName(folder: string): string {
  const name = basename(resolve(folder)).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+/, '');
  return name || 'sluice-pipelines';
}

/** Scaffolds a project into `folder` (created if missing) and returns the files it wrote. */
export function initProject(folder: string): string[] {
  const target = resolve(folder);
  if (existsSync(target)) {
    const present = readdirSync(target).filter((entry) => !ALLOWED.has(entry));
    if (present.length > 0) {
      throw new Error(
        `${folder} is not empty (${present.slice(0, 3).join(', ')}${present.length > 3 ? ', ...' : ''}): sluice init writes a new project; ` +
          'give it a new folder (npx sluice init my-pipelines)',
      );
    }
  }
  mkdirSync(target, { recursive: true });
  cpSync(TEMPLATE, target, { recursive: true });
  // npm leaves .gitignore out of a package, so the template's is named without its dot.
  renameSync(join(target, 'gitignore'), join(target, '.gitignore'));
  const sluice = JSON.parse(readFileSync(join(SLUICE_ROOT, 'package.json'), 'utf8')) as {
    version: string;
    devDependencies: Record<string, string>;
    overrides?: Record<string, string>;
  };
  const values: Record<string, string> = { name: packageName(folder), sluice: `^${sluice.version}`, ...sluice.devDependencies };
  for (const file of ['package.json', 'README.md']) {
    const path = join(target, file);
    const text = readFileSync(path, 'utf8').replace(/\{\{([^}]+)\}\}/g, (placeholder, key: string) => values[key] ?? placeholder);
    writeFileSync(path, text);
  }
  // The test tools' versions, and their pins, as Sluice's own tests run them.
  const manifestPath = join(target, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
  if (sluice.overrides) writeFileSync(manifestPath, `${JSON.stringify({ ...manifest, overrides: sluice.overrides }, null, 2)}\n`);
  return readdirSync(target, { recursive: true, encoding: 'utf8' }).sort();
}
