import type { CommittedReader, TopicAdmin } from '../kafka/clients.js';
import { MissingTopicsError } from '../kafka/errors.js';
import type { TopicSpec } from '../kafka/admin.js';
import type { RecordWriter } from '../kafka/writer.js';
import { deploymentsTopicName } from '../plan/names.js';
import type { Plan } from '../plan/plan.js';

/** A deployment whose coordinator has said nothing for this long is taken as gone (three of its once-a-minute runs). */
export const DEPLOYMENT_STALE_MS = 180_000;
/** How often a coordinator says its deployment runs, however often it runs itself. */
const HEARTBEAT_EVERY_MS = 30_000;
/** How long a processor container trusts its last look at the other deployments. */
const RECHECK_EVERY_MS = 300_000;
/** How far back a look reads: heartbeats every 30 s from the deployment that runs, and none from those refused. */
const TAIL_RECORDS = 100;

/** What a deployment's coordinator writes to the deployments topic. */
interface Heartbeat {
  readonly deployment: string;
  /** When this deployment's current run of heartbeats began: the oldest that still beats is the one that runs. */
  readonly activeSince: number;
  readonly at: number;
}

/** Another deployment under the same broker-side names runs: this one must not touch them. */
export class SecondDeploymentError extends Error {
  override readonly name = 'SecondDeploymentError';
}

export interface DeploymentClaimOptions {
  readonly plan: Pick<Plan, 'pipeline' | 'deploymentStage'>;
  /** What tells this deployment from another of the same names: the functions' `SLUICE_DEPLOYMENT_ID` (account, region, stack). */
  readonly deployment: string;
  readonly admin: Pick<TopicAdmin, 'describeTopics'> & { ensureTopics(specs: readonly TopicSpec[]): Promise<unknown> };
  readonly reader: Pick<CommittedReader, 'readAvailable'>;
  readonly writer: () => RecordWriter;
  readonly clock?: () => number;
}

/**
 * One deployment per set of broker-side names. Two deployments of one pipeline name and stage
 * on one cluster (two accounts or regions, or a copied pipeline file that kept its name) would
 * share consumer groups, transactional ids and repartition topics: each would see part of the
 * input, fence the other's transactions and read the other's shuffled records, exactly-once
 * broken with no error. So each deployment's coordinator says on the topic
 * `<pipeline>-<deployment stage>-deployments` that it runs; of those that still say so, the one
 * that began first runs, and every other refuses: its coordinator triggers nothing and its
 * processors process nothing, each failing with what to do, until the first has been silent
 * for {@link DEPLOYMENT_STALE_MS}.
 */
export class DeploymentClaim {
  private readonly clock: () => number;
  private readonly topic: string;
  private lastBeat = Number.NEGATIVE_INFINITY;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private heartbeats: RecordWriter | undefined;
  private topicReady: Promise<unknown> | undefined;

  constructor(private readonly options: DeploymentClaimOptions) {
    this.clock = options.clock ?? Date.now;
    this.topic = deploymentsTopicName(options.plan);
  }

  /** The coordinator's claim, before each run: refuses while an older deployment runs, else says this one runs. */
  async heartbeat(): Promise<void> {
    const now = this.clock();
    if (now - this.lastBeat < HEARTBEAT_EVERY_MS) return;
    // Once per container, not at every heartbeat.
    this.topicReady ??= this.options.admin
      .ensureTopics([{ topic: this.topic, partitions: 1, configs: { 'retention.ms': String(24 * 3_600_000), 'segment.ms': String(3_600_000) } }])
      .catch((error: unknown) => {
        this.topicReady = undefined;
        throw error;
      });
    await this.topicReady;
    const latest = await this.latestHeartbeats();
    this.refuseIfAnotherRuns(latest, now);
    const mine = latest.get(this.options.deployment);
    const starting = !mine || now - mine.at > DEPLOYMENT_STALE_MS;
    this.heartbeats ??= this.options.writer();
    const heartbeat: Heartbeat = { deployment: this.options.deployment, activeSince: starting ? now : mine.activeSince, at: now };
    await this.heartbeats.write([{ topic: this.topic, partition: 0, key: this.options.deployment, value: JSON.stringify(heartbeat), timestamp: Date.now() }]);
    await this.heartbeats.flush();
    // Two deployments starting at once may each have read before the other wrote: read again,
    // now that this one's heartbeat is there, and the younger of the two gives way.
    if (starting) this.refuseIfAnotherRuns(await this.latestHeartbeats(), now);
    this.lastBeat = now;
  }

  /** A processor's check, before it touches the pipeline's names: refuses while another deployment runs. */
  async check(): Promise<void> {
    const now = this.clock();
    if (now - this.checkedAt < RECHECK_EVERY_MS) return;
    this.refuseIfAnotherRuns(await this.latestHeartbeats(), now);
    this.checkedAt = now;
  }

  async close(): Promise<void> {
    await this.heartbeats?.close();
  }

  /** Throws when another deployment beats, and began before this one (or is the only one that beats). */
  private refuseIfAnotherRuns(latest: ReadonlyMap<string, Heartbeat>, now: number): void {
    const beating = [...latest.values()].filter((h) => now - h.at <= DEPLOYMENT_STALE_MS);
    const mine = beating.find((h) => h.deployment === this.options.deployment);
    const older = beating
      .filter((h) => h.deployment !== this.options.deployment)
      .filter((h) => !mine || h.activeSince < mine.activeSince || (h.activeSince === mine.activeSince && h.deployment < mine.deployment))
      .sort((a, b) => a.activeSince - b.activeSince)[0];
    if (!older) return;
    const { pipeline, deploymentStage } = this.options.plan;
    throw new SecondDeploymentError(
      `Another deployment of pipeline ${pipeline}${deploymentStage ? ` (stage ${deploymentStage})` : ''} runs on these brokers: ` +
        `${older.deployment}, running since ${new Date(older.activeSince).toISOString()}, last heard ${Math.round((now - older.at) / 1_000)} s ago ` +
        `(this is ${this.options.deployment}). Under one pipeline name and stage both would use the same consumer groups, transactional ids ` +
        `and repartition topics, and break each other's exactly-once, so this one processes nothing while that one runs. Remove one of them, ` +
        `or deploy this one under another stage (sluice deploy --stage) or pipeline name. It starts by itself ` +
        `${DEPLOYMENT_STALE_MS / 60_000} minutes after the other stops.`,
    );
  }

  /** The latest heartbeat of each deployment in the topic's tail; none when the topic does not exist yet. */
  private async latestHeartbeats(): Promise<Map<string, Heartbeat>> {
    const latest = new Map<string, Heartbeat>();
    let description;
    try {
      [description] = await this.options.admin.describeTopics([this.topic]);
    } catch (error) {
      if (error instanceof MissingTopicsError) return latest;
      throw error;
    }
    const partition = description?.partitions[0];
    const end = Number(partition?.stable ?? 0);
    for (let next = Math.max(Number(partition?.low ?? 0), end - TAIL_RECORDS); next < end; ) {
      const polled = await this.options.reader.readAvailable(this.topic, 0, next, TAIL_RECORDS);
      for (const record of polled.records) {
        const heartbeat = JSON.parse(record.value?.toString('utf8') ?? '{}') as Partial<Heartbeat>;
        if (typeof heartbeat.deployment === 'string' && typeof heartbeat.at === 'number' && typeof heartbeat.activeSince === 'number') {
          latest.set(heartbeat.deployment, heartbeat as Heartbeat);
        }
      }
      if (polled.next <= next) break;
      next = polled.next;
    }
    return latest;
  }
}
