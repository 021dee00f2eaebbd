import { describe, expect, it } from 'vitest';
import { sluice } from '../../helpers/cli.js';

describe('the sluice command line', () => {
  it('lists its commands, and exits 2 for an unknown one', async () => {
    const help = await sluice('--help');
    expect(help.code).toBe(0);
    for (const command of ['offline', 'explain', 'cost', 'deploy', 'status', 'savepoint', 'restore']) expect(help.stdout).toContain(`  ${command} `);
    expect((await sluice('launch')).code).toBe(2);
  });

  it('explains each command with --help', async () => {
    for (const command of ['offline', 'cost', 'deploy', 'status', 'savepoint', 'restore']) {
      const { code, stdout } = await sluice(command, '--help');
      expect(code).toBe(0);
      expect(stdout).toContain(`Usage: sluice ${command}`);
    }
  });

  it('refuses a wrong command line with exit code 2 and says what is wrong', async () => {
    expect(await sluice('deploy', 'examples/order-aggregation.ts', '--param', 'mskClusterArn')).toMatchObject({ code: 2, stderr: expect.stringContaining('--param takes name=value, not mskClusterArn') as unknown });
    expect(await sluice('offline', 'examples/order-aggregation.ts', '--generate', 'fast')).toMatchObject({ code: 2, stderr: expect.stringContaining('--generate must be a positive number, not fast') as unknown });
    expect(await sluice('offline', 'examples/order-aggregation.ts', '--generate', '10', '--no-generate')).toMatchObject({ code: 2, stderr: expect.stringContaining('not both') as unknown });
    expect(await sluice('restore', 'examples/order-aggregation.ts', '--checkpoint', 'latest')).toMatchObject({ code: 2 });
    expect(await sluice('savepoint', 'examples/order-aggregation.ts', '--name', 'bad/name')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(`"bad/name" is not a valid savepoint name: use letters, digits, '.', '_' and '-'`) as unknown,
    });
  });

  it('models what a pipeline costs at a rate, and needs the rate', async () => {
    const { code, stdout } = await sluice('cost', 'examples/order-aggregation.ts', '--rate', '10000', '--partitions', '8', '--no-type-check');
    expect(code).toBe(0);
    expect(stdout).toContain('order-aggregation at 10,000 records/s: 2 stages on 8 shards, batches of 1,250 (a 1 s window, at most 10,000)');
    expect(stdout).toMatch(/^Sluice ÷ Managed Flink, cluster excluded, 10,000 records\/s: \d+\.\d\d$/m);
    expect(stdout).toMatch(/^The Kafka cluster \(3 × kafka\.m7g\.large\), for either: \$0\.0170 a million, \$446\.76 a month$/m);
    expect(await sluice('cost', 'examples/order-aggregation.ts')).toMatchObject({ code: 2, stderr: expect.stringContaining('give the rate: --rate <records/s>') as unknown });
    expect(await sluice('cost', 'examples/order-aggregation.ts', '--rate', '10', '--partitions', '2.5')).toMatchObject({ code: 2, stderr: expect.stringContaining('--partitions must be a whole number, not 2.5') as unknown });
  });

  it('fails with exit code 1 when --generate has no generator to use', async () => {
    const { code, stderr } = await sluice('offline', 'test/fixtures/pipelines/top-category.ts', '--generate', '10');
    expect(code).toBe(1);
    expect(stderr).toContain('exports no generateInput(index)');
  });
});
