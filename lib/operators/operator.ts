import type { OutputTag } from '../api/output-tag.js';
import type { AnyStateDescriptor } from '../api/state.js';
import { MIN_WATERMARK } from '../api/time.js';
import type { KeyedStateBackend } from '../state/keyed-state-backend.js';
import type { KeyRef } from '../state/keys.js';
import type { TimeDomain, Timer, TimerQueue } from './timers.js';

/** An element on its way through the operators, with its event time and (after keyBy) its key. */
export interface StreamRecord<T = unknown> {
  readonly value: T;
  readonly timestamp: number | undefined;
  readonly key?: KeyRef;
}

/** Where an operator sends what it produces. */
export interface Output {
  collect(record: StreamRecord): void;
  emitWatermark(watermark: number): void;
  side(tag: OutputTag<unknown>, record: StreamRecord): void;
}

/** Counters an operator may bump; the runtime reports them as metrics. */
export type Metrics = Record<string, number>;

/** What the stage executor gives each operator. */
export interface OperatorServices {
  readonly operatorName: string;
  readonly state: KeyedStateBackend;
  readonly eventTimers: TimerQueue;
  readonly processingTimers: TimerQueue;
  readonly metrics: Metrics;
  processingTime(): number;
  /**
   * Hands an element and its new event time to the watermark generator of the source partition
   * it came from (`assignTimestampsAndWatermarks`).
   */
  onEventTime(value: unknown, timestamp: number): void;
  /** The key of the element or timer being processed (keyed operators only). */
  currentKey(): KeyRef;
  setCurrentKey(key: KeyRef | undefined): void;
}

/** Thrown by an operator when a user function fails, so that the error names the operator. */
export class UserFunctionError extends Error {
  override readonly name = 'UserFunctionError';

  constructor(
    readonly operatorName: string,
    override readonly cause: unknown,
  ) {
    super(`${operatorName} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** One operator instance of a stage (Flink's `StreamOperator`). */
export abstract class StreamOperator {
  protected services!: OperatorServices;
  protected output!: Output;
  protected watermark = MIN_WATERMARK;

  setup(services: OperatorServices, output: Output): void {
    this.services = services;
    this.output = output;
  }

  open(): void {
    // Most operators need no preparation.
  }

  abstract processElement(record: StreamRecord): void;

  /** The state this operator declares, for `explain` and validation. */
  describeState(): AnyStateDescriptor[] {
    return [];
  }

  currentWatermark(): number {
    return this.watermark;
  }

  /** Advances event time: fires the due event-time timers in order, then passes the watermark on. */
  processWatermark(watermark: number): void {
    if (watermark <= this.watermark) return;
    this.watermark = watermark;
    this.fireDue(this.services.eventTimers, watermark, 'EVENT_TIME');
    this.output.emitWatermark(watermark);
  }

  /** Fires the processing-time timers due at `time`. */
  advanceProcessingTime(time: number): void {
    this.fireDue(this.services.processingTimers, time, 'PROCESSING_TIME');
  }

  protected onTimer(_timer: Timer, _domain: TimeDomain): void {
    // Operators without timers never get here.
  }

  private fireDue(queue: TimerQueue, time: number, domain: TimeDomain): void {
    for (let timer = queue.pollDue(time); timer; timer = queue.pollDue(time)) {
      this.services.setCurrentKey(timer.key);
      this.onTimer(timer, domain);
    }
    this.services.setCurrentKey(undefined);
  }

  /** Runs a user function, naming this operator if it throws. */
  protected call<R>(fn: () => R): R {
    try {
      return fn();
    } catch (error) {
      if (error instanceof UserFunctionError) throw error;
      throw new UserFunctionError(this.services.operatorName, error);
    }
  }
}

export type OperatorFactory = () => StreamOperator;
