// The deployed coordinator's schedule against EventBridge (moto's server): at rest its rule is
// turned off, so that no function runs, and on again when the pipeline wakes.
import { DescribeRuleCommand, PutRuleCommand } from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventBridgeClient } from '../../../lib/aws/clients.js';
import { EventBridgeSchedule } from '../../../lib/aws/coordinator-schedule.js';
import { startMotoServer, type Emulator } from '../../../lib/offline/emulators.js';

let moto: Emulator | undefined;
beforeAll(async () => {
  moto = await startMotoServer();
});
afterAll(async () => {
  await moto?.close();
});

describe("the coordinator's EventBridge schedule", () => {
  it('turns the rule off at rest and on again, as often as asked', async () => {
    const options = { ...moto?.clientOptions, region: 'eu-west-1' };
    const events = await createEventBridgeClient(options);
    const Name = 'sluice-orders-prod-coordinator';
    await events.send(new PutRuleCommand({ Name, ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' }));
    const state = async () => (await events.send(new DescribeRuleCommand({ Name }))).State;
    const schedule = new EventBridgeSchedule(Name, options);
    await schedule.pause();
    expect(await state()).toBe('DISABLED');
    await schedule.pause();
    expect(await state()).toBe('DISABLED');
    await schedule.resume();
    await schedule.resume();
    expect(await state()).toBe('ENABLED');
    events.destroy();
  });
});
