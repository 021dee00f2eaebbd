// The simulation's scheduler: it owns simulated time and decides, one request at a time, which
// actor's pending request is answered next — or whether that actor crashes there, or stalls
// for a long while first. Every await on a twin (DynamoDB, S3, Kafka) is such a request, so a
// seed fixes the whole interleaving.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TwinIo } from '../../lib/testing/kafka-twin.js';

/** An actor died at an await: a Lambda invocation killed or timed out there. */
export class Crash extends Error {
  override readonly name = 'Crash';
}

/** What the services answer under load: the SDK's retries meet throttling and lost responses. */
export class ServiceUnavailable extends Error {
  override readonly name = 'ServiceUnavailable';
}

/**
 * A Kafka request the client gave up on, its retries spent, that the broker never applied: a
 * partition leader or transaction coordinator moving (NOT_LEADER_OR_FOLLOWER, NOT_COORDINATOR,
 * COORDINATOR_NOT_AVAILABLE), CONCURRENT_TRANSACTIONS past the retries, a connection dropped
 * before the request went out.
 */
export class KafkaRequestRefused extends Error {
  override readonly name = 'KafkaRequestRefused';
}

/** A Kafka request whose answer never came: the broker applied it, and the client cannot know (a request timeout, a connection dropped mid-answer). */
export class KafkaRequestTimedOut extends Error {
  override readonly name = 'KafkaRequestTimedOut';
}

/**
 * What the broker says when it refuses a request without acting on it (Kafka's
 * TransactionCoordinator and ReplicaManager). Not InitProducerId's CONCURRENT_TRANSACTIONS: over
 * an ongoing transaction the coordinator aborts it and bumps the epoch before it answers so,
 * which is a request applied and its answer lost ({@link KafkaRequestTimedOut}).
 */
const REFUSALS: Readonly<Record<string, readonly string[]>> = {
  EndTxn: ['NOT_COORDINATOR', 'COORDINATOR_NOT_AVAILABLE', 'CONCURRENT_TRANSACTIONS'],
  InitProducerId: ['NOT_COORDINATOR', 'COORDINATOR_NOT_AVAILABLE'],
  DescribeTransactions: ['NOT_COORDINATOR', 'COORDINATOR_NOT_AVAILABLE'],
  Produce: ['NOT_LEADER_OR_FOLLOWER', 'the connection closed before the request went out'],
  Fetch: ['NOT_LEADER_OR_FOLLOWER', 'the connection closed mid-fetch'],
};

export interface Actor {
  readonly id: number;
  readonly name: string;
  crashed: boolean;
  /** Its requests wait until this simulated time: a stale actor, acting much later on what it read. */
  stalledUntil: number;
  /** The broker's own work, which it retries until done: it may stall, never crash. */
  readonly durable: boolean;
}

interface PendingRequest {
  readonly actor: Actor;
  readonly operation: string;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

export interface FaultRates {
  /** Per request: the actor crashes right there. */
  readonly crash: number;
  /** Per request: the actor stalls for a long while before it is answered. */
  readonly stall: number;
  /** Per DynamoDB or S3 request: throttled before it reaches the service (the SDK retries). */
  readonly throttle: number;
  /** Per DynamoDB or S3 request: applied, but its answer is lost (the SDK retries it). */
  readonly ambiguous: number;
  /** Per Kafka request of an invocation: it fails, half the time before the broker applied it ({@link KafkaRequestRefused}), half after ({@link KafkaRequestTimedOut}). */
  readonly kafkaErrors?: number;
  /** Extra stall rate per request of one kind of actor (the first word of its name): a schedule of stale commit functions, say. */
  readonly staleKind?: { readonly kind: string; readonly stall: number };
  /** Extra crash rate per request of some kinds of actor: shard invocations dying one after another, say. */
  readonly crashKinds?: { readonly kinds: readonly string[]; readonly crash: number };
}

function ofKind(actor: Actor, kind: string): boolean {
  return actor.name.startsWith(`${kind} `);
}

export const NO_FAULTS: FaultRates = { crash: 0, stall: 0, throttle: 0, ambiguous: 0 };

/** How many times the simulated SDK sends one request before it gives up. */
const SDK_ATTEMPTS = 6;

/**
 * Which actor is running, across its awaits. One for every scheduler: Node propagates every
 * AsyncLocalStorage ever enabled into each new promise, so one per schedule would slow each
 * schedule down more than the one before.
 */
const currentActor = new AsyncLocalStorage<Actor>();

/** The world itself (Lambda's pollers, the operator, the checks): its requests are answered at once, never scheduled. */
const WORLD: Actor = { id: 0, name: 'world', crashed: false, stalledUntil: 0, durable: true };

export class Scheduler {
  private readonly pending: PendingRequest[] = [];
  private readonly running = new Set<Actor>();
  private nextActor = 1;
  steps = 0;
  now: number;
  /** Simulated time not yet whole milliseconds. */
  private elapsed = 0;
  faults: FaultRates = NO_FAULTS;
  readonly counts = { crashes: 0, stalls: 0, throttled: 0, ambiguous: 0, kafkaErrors: 0, actors: 0 };
  /** One line per decision, for replaying a failure by eye. */
  readonly trace: string[] = [];

  constructor(
    /**
     * Two streams of the seed's: `scheduling` picks the request answered next and the time it
     * takes; `faults` rolls crashes, stalls, throttling and lost answers. A change to the faults
     * drawn leaves the order of the answers as it was, and the other way round.
     */
    private readonly streams: { readonly scheduling: () => number; readonly faults: () => number },
    start: number,
    private readonly keepTrace = false,
  ) {
    this.now = start;
  }

  readonly clock = (): number => this.now;

  /** Starts `run` as an actor of its own; its requests are scheduled like every other's. */
  spawn<T>(name: string, run: () => Promise<T>, { durable = false } = {}): Promise<T> {
    const actor: Actor = { id: this.nextActor++, name, crashed: false, stalledUntil: 0, durable };
    this.counts.actors++;
    this.running.add(actor);
    this.log(`spawn #${actor.id} ${name}`);
    return currentActor.run(actor, async () => {
      try {
        return await run();
      } finally {
        this.running.delete(actor);
      }
    });
  }

  get idle(): boolean {
    return this.running.size === 0;
  }

  /** Whether an actor of one of these kinds (the first word of its name) is still running. */
  runs(kinds: readonly string[]): boolean {
    return [...this.running].some((actor) => kinds.some((kind) => ofKind(actor, kind)));
  }

  /**
   * Runs the world's own access to the twins (a poller's read, a check), outside every actor:
   * its requests are answered at once. Any other request outside an actor is a mistake of the
   * harness, which would go unscheduled, and throws.
   */
  outside<T>(run: () => Promise<T>): Promise<T> {
    return currentActor.run(WORLD, run);
  }

  /** A request of the current actor: resolves when the scheduler answers it. */
  request(operation: string): Promise<void> {
    const actor = currentActor.getStore();
    if (!actor) throw new Error(`${operation} was requested outside every actor: run it in Scheduler.spawn, or in Scheduler.outside for the world's own access`);
    if (actor === WORLD) return Promise.resolve();
    if (actor.crashed) return Promise.reject(new Crash(`#${actor.id} is dead`));
    return new Promise<void>((resolve, reject) => this.pending.push({ actor, operation, resolve, reject }));
  }

  /** {@link TwinIo} for a service: each call is a request, and DynamoDB and S3 also meet throttling and lost answers. */
  io(service: 'dynamodb' | 's3' | 'kafka'): TwinIo {
    return {
      call: async <T>(operation: string, apply: () => T | Promise<T>): Promise<T> => {
        const name = `${service}.${operation}`;
        for (let attempt = 1; ; attempt++) {
          await this.request(name);
          if (service === 'kafka') return this.kafkaAnswer(operation, apply);
          if (this.streams.faults() < this.faults.throttle) {
            this.counts.throttled++;
          } else {
            const result = await apply();
            if (this.streams.faults() >= this.faults.ambiguous) return result;
            this.counts.ambiguous++;
          }
          if (attempt >= SDK_ATTEMPTS) throw new ServiceUnavailable(`${name} failed ${SDK_ATTEMPTS} times`);
        }
      },
      idle: () => this.request(`${service}.wait`),
      background: (operation, apply) => {
        void this.spawn(
          `${service} ${operation}`,
          async () => {
            await this.request(`${service}.${operation}`);
            apply();
          },
          { durable: true },
        );
      },
    };
  }

  /**
   * A Kafka request's answer, or with {@link FaultRates.kafkaErrors} its failure: refused before
   * the broker applied it, or timed out after. The world's own reads and the broker's own work
   * never fail.
   */
  private async kafkaAnswer<T>(operation: string, apply: () => T | Promise<T>): Promise<T> {
    const actor = currentActor.getStore();
    const rate = this.faults.kafkaErrors ?? 0;
    if (rate === 0 || !actor || actor.durable || this.streams.faults() >= rate) return apply();
    this.counts.kafkaErrors++;
    const refusals = REFUSALS[operation] ?? ['NOT_LEADER_OR_FOLLOWER'];
    if (this.streams.faults() < 0.5) {
      const refusal = refusals[Math.floor(this.streams.faults() * refusals.length)] ?? 'NOT_LEADER_OR_FOLLOWER';
      this.log(`kafka refuses #${actor.id} ${actor.name} ${operation}: ${refusal}`);
      throw new KafkaRequestRefused(`${operation} failed after the client's retries: ${refusal}`);
    }
    await apply();
    this.log(`kafka applied #${actor.id} ${actor.name} ${operation}, its answer lost`);
    throw new KafkaRequestTimedOut(`${operation} timed out: the broker may have applied it`);
  }

  /**
   * Answers one pending request (or fails it with a crash, or stalls its actor), after letting
   * every actor run until it waits on a request. False when nothing can be answered yet.
   */
  async step(): Promise<boolean> {
    await new Promise((resolve) => setImmediate(resolve));
    if (this.pending.length === 0) return false;
    // A stalled actor waits in simulated time, while the world goes on: schedules fire, batches
    // arrive, and the others act on what they read since.
    const eligible = this.pending.filter((p) => p.actor.stalledUntil <= this.now);
    const chosen = eligible[Math.floor(this.streams.scheduling() * eligible.length)];
    if (!chosen) return false;
    this.steps++;
    // A request takes a few milliseconds, as DynamoDB's and Kafka's do, and the services answer
    // the requests waiting at once in parallel: an actor's latency does not grow with how many
    // others are waiting, or a pile of invocations would slow every one of them down.
    this.elapsed += (1 + Math.floor(this.streams.scheduling() * 9)) / eligible.length;
    const whole = Math.floor(this.elapsed);
    this.now += whole;
    this.elapsed -= whole;
    const roll = this.streams.faults();
    const { staleKind, crashKinds } = this.faults;
    const crash = chosen.actor.durable ? 0 : this.faults.crash + (crashKinds?.kinds.some((kind) => ofKind(chosen.actor, kind)) ? crashKinds.crash : 0);
    const stall = this.faults.stall + (staleKind && ofKind(chosen.actor, staleKind.kind) ? staleKind.stall : 0);
    if (roll < crash) {
      this.remove(chosen);
      chosen.actor.crashed = true;
      this.counts.crashes++;
      this.log(`crash #${chosen.actor.id} ${chosen.actor.name} at ${chosen.operation}`);
      chosen.reject(new Crash(`#${chosen.actor.id} ${chosen.actor.name} crashed at ${chosen.operation}`));
    } else if (roll < crash + stall) {
      // Mostly a moment; now and then long enough for transactions to time out behind it.
      const long = this.streams.faults() < 0.2;
      chosen.actor.stalledUntil = this.now + (long ? 7_500 + Math.floor(this.streams.faults() * 20_000) : 250 + Math.floor(this.streams.faults() * 3_000));
      this.counts.stalls++;
      this.log(`stall #${chosen.actor.id} ${chosen.actor.name} at ${chosen.operation} until t+${chosen.actor.stalledUntil}`);
    } else {
      this.remove(chosen);
      if (this.keepTrace) this.log(`#${chosen.actor.id} ${chosen.actor.name} ${chosen.operation}`);
      chosen.resolve();
    }
    return true;
  }

  /** Ends the fault phase: stalled actors wake, and nothing more goes wrong. */
  calm(): void {
    this.faults = NO_FAULTS;
    for (const { actor } of this.pending) actor.stalledUntil = 0;
  }

  private remove(request: PendingRequest): void {
    this.pending.splice(this.pending.indexOf(request), 1);
  }

  log(line: string): void {
    this.trace.push(`${String(this.steps).padStart(6)} t+${this.now} ${line}`);
  }
}
