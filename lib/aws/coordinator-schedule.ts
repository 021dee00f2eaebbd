import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { CoordinatorSchedule } from '../runtime/quiescence.js';
import { createEventBridgeClient, type AwsClientOptions } from './clients.js';

/**
 * The deployed coordinator's schedule: its EventBridge rule (`SLUICE_COORDINATOR_RULE`), turned
 * off while the pipeline rests, so that no function runs, and on again by the first invocation
 * that takes input (docs/PROTOCOL.md, "At rest").
 */
export class EventBridgeSchedule implements CoordinatorSchedule {
  private client: Promise<EventBridgeClient> | undefined;

  constructor(
    private readonly ruleName: string,
    private readonly options: AwsClientOptions = {},
  ) {}

  async pause(): Promise<void> {
    const { DisableRuleCommand } = await import('@aws-sdk/client-eventbridge');
    await (await this.connected()).send(new DisableRuleCommand({ Name: this.ruleName }));
  }

  async resume(): Promise<void> {
    const { EnableRuleCommand } = await import('@aws-sdk/client-eventbridge');
    await (await this.connected()).send(new EnableRuleCommand({ Name: this.ruleName }));
  }

  private connected(): Promise<EventBridgeClient> {
    this.client ??= createEventBridgeClient(this.options);
    return this.client;
  }
}
