import { DisableRuleCommand, EnableRuleCommand } from '@aws-sdk/client-eventbridge';
import type { CoordinatorSchedule } from '../runtime/quiescence.js';
import { createEventBridgeClient, type AwsClientOptions } from './clients.js';

/**
 * The deployed coordinator's schedule: its EventBridge rule (`SLUICE_COORDINATOR_RULE`), turned
 * off while the pipeline rests, so that no function runs, and on again by the first invocation
 * that takes input (docs/PROTOCOL.md, "At rest").
 */
export class EventBridgeSchedule implements CoordinatorSchedule {
  private readonly client;

  constructor(
    private readonly ruleName: string,
    options: AwsClientOptions = {},
  ) {
    this.client = createEventBridgeClient(options);
  }

  async pause(): Promise<void> {
    await this.client.send(new DisableRuleCommand({ Name: this.ruleName }));
  }

  async resume(): Promise<void> {
    await this.client.send(new EnableRuleCommand({ Name: this.ruleName }));
  }
}
