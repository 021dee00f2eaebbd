// `npm run conformance [-- --only name,name]`: runs every scenario on Apache Flink 2.2 (built
// with Maven from test/conformance/pom.xml, run in Flink's local environment) and on Sluice,
// rewrites each scenario's expected-by-flink.txt with Flink's output and the hash of what it
// ran on, compares the two record for record, prints a line per scenario and `N passed, M failed`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { comparable, CONFORMANCE_DIR, EXPECTED_FILE, expectedFileText, inputsHash, runOnSluice, scenarios } from './scenarios.js';

const { values } = parseArgs({ options: { only: { type: 'string' } } });
const only = values.only?.split(',');
const chosen = scenarios().filter((s) => !only || only.includes(s.name));

const target = join(CONFORMANCE_DIR, '..', '..', '.sluice', 'conformance', 'target');
process.stdout.write('Building the Flink jobs (mvn package)...\n');
execFileSync('mvn', ['-q', '-B', 'package', '-DskipTests'], { cwd: CONFORMANCE_DIR, stdio: 'inherit' });

const outputs = mkdtempSync(join(tmpdir(), 'sluice-conformance-'));
try {
  const args = chosen.flatMap((s) => [s.folder, s.javaClass, join(outputs, s.name)]);
  execFileSync('java', ['-cp', `${join(target, 'flink-conformance-1.0.0.jar')}:${join(target, 'lib', '*')}`, 'dev.sluice.conformance.Runner', ...args], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  let failed = 0;
  for (const scenario of chosen) {
    const flink = readFileSync(join(outputs, scenario.name), 'utf8').split('\n').filter((l) => l !== '');
    writeFileSync(join(scenario.folder, EXPECTED_FILE), expectedFileText(inputsHash(scenario), flink));
    const sluice = comparable(scenario, await runOnSluice(scenario));
    const same = JSON.stringify(sluice) === JSON.stringify(comparable(scenario, flink));
    if (!same) failed++;
    process.stdout.write(`${same ? 'pass' : 'FAIL'} ${scenario.name}: Flink ${flink.length} records, Sluice ${sluice.length}\n`);
    if (!same) process.stdout.write(`  Flink:  ${JSON.stringify(flink)}\n  Sluice: ${JSON.stringify(sluice)}\n`);
  }
  process.stdout.write(`${chosen.length - failed} passed, ${failed} failed\n`);
  process.exitCode = failed > 0 ? 1 : 0;
} finally {
  rmSync(outputs, { recursive: true, force: true });
}
