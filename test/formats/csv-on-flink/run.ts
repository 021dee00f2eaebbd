// npm run conformance:csv — runs cases.txt through Flink 2.2's csv format (CsvOnFlink.java) and
// writes what Flink reads and writes to expected-by-flink.txt, which test/unit/sql/csv-format.test.ts
// holds Sluice's csv format to. Needs Java 17 and Maven; the JVM is not part of `npm test`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const target = join(here, 'target');
mkdirSync(join(target, 'classes'), { recursive: true });
const classpathFile = join(target, 'classpath.txt');
execFileSync('mvn', ['-q', '-f', join(here, 'pom.xml'), 'dependency:build-classpath', `-Dmdep.outputFile=${classpathFile}`], { stdio: 'inherit' });
const classpath = readFileSync(classpathFile, 'utf8').trim();
execFileSync('javac', ['-d', join(target, 'classes'), '-cp', classpath, join(here, 'CsvOnFlink.java')], { stdio: 'inherit' });
execFileSync('java', ['-cp', `${join(target, 'classes')}:${classpath}`, 'dev.sluice.conformance.CsvOnFlink', join(here, 'cases.txt'), join(here, 'expected-by-flink.txt')], {
  stdio: 'inherit',
});
console.log(`wrote ${join(here, 'expected-by-flink.txt')}`);
