import type { ProcessJoinFunction } from '../api/functions.js';
import type { OutputTag } from '../api/output-tag.js';
import { MapStateDescriptor, type AnyStateDescriptor, type MapState } from '../api/state.js';
import { MIN_WATERMARK } from '../api/time.js';
import { mapState } from './keyed-state.js';
import { StreamOperator, type StreamRecord } from './operator.js';
import type { Timer } from './timers.js';

export interface IntervalJoinOptions {
  /** Right elements join a left one at t when their time is in [t + lower, t + upper]; both inclusive here. */
  readonly lower: number;
  readonly upper: number;
  readonly fn: ProcessJoinFunction<unknown, unknown, unknown>;
  readonly leftLate: OutputTag<unknown> | undefined;
  readonly rightLate: OutputTag<unknown> | undefined;
}

/** Each side's elements of a key, by event time, kept until no element of the other side can join them. */
const LEFT = new MapStateDescriptor<number, unknown[]>('left-buffer');
const RIGHT = new MapStateDescriptor<number, unknown[]>('right-buffer');

interface TaggedElement {
  readonly input: 1 | 2;
  readonly value: unknown;
}

/**
 * A keyed interval join, as Flink's IntervalJoinOperator: each element is buffered by its
 * timestamp and joined with the other side's buffered elements whose time falls in its
 * interval; an element behind the watermark is late. A buffered element goes when the watermark
 * passes the last time an element of the other side could join it. Its input is both sides
 * tagged and keyed as one (see ConnectedStreams).
 */
export class IntervalJoinOperator extends StreamOperator {
  private left: MapState<number, unknown[]> | undefined;
  private right: MapState<number, unknown[]> | undefined;

  constructor(private readonly options: IntervalJoinOptions) {
    super();
  }

  override describeState(): AnyStateDescriptor[] {
    return [LEFT, RIGHT];
  }

  processElement(record: StreamRecord): void {
    const { input, value } = record.value as TaggedElement;
    const timestamp = record.timestamp;
    if (timestamp === undefined) {
      throw new Error(`${this.services.operatorName}: an interval join needs elements with timestamps; give the source a WatermarkStrategy with them`);
    }
    const { lower, upper } = this.options;
    const isLeft = input === 1;
    // The right side's interval is the left one's, seen from the other end.
    const [from, to] = isLeft ? [lower, upper] : [-upper, -lower];
    if (this.watermark !== MIN_WATERMARK && timestamp < this.watermark) {
      const tag = isLeft ? this.options.leftLate : this.options.rightLate;
      if (tag) this.output.side(tag, { value, timestamp });
      else this.services.metrics.lateRecordsDropped = (this.services.metrics.lateRecordsDropped ?? 0) + 1;
      return;
    }
    const ours = isLeft ? this.leftBuffer() : this.rightBuffer();
    const theirs = isLeft ? this.rightBuffer() : this.leftBuffer();
    ours.put(timestamp, [...(ours.get(timestamp) ?? []), value]);
    for (const [time, others] of theirs.entries()) {
      if (time < timestamp + from || time > timestamp + to) continue;
      for (const other of others) {
        if (isLeft) this.join(value, other, timestamp, time);
        else this.join(other, value, time, timestamp);
      }
    }
    const cleanup = to > 0 ? timestamp + to : timestamp;
    this.services.eventTimers.register({ key: this.services.currentKey(), timestamp: cleanup, namespace: '' });
  }

  private leftBuffer(): MapState<number, unknown[]> {
    return (this.left ??= mapState(this.services, LEFT));
  }

  private rightBuffer(): MapState<number, unknown[]> {
    return (this.right ??= mapState(this.services, RIGHT));
  }

  private join(left: unknown, right: unknown, leftTimestamp: number, rightTimestamp: number): void {
    const timestamp = Math.max(leftTimestamp, rightTimestamp);
    this.call(() =>
      this.options.fn(
        left,
        right,
        { leftTimestamp, rightTimestamp, timestamp, output: (tag, value) => this.output.side(tag, { value, timestamp }) },
        { collect: (value) => this.output.collect({ value, timestamp }) },
      ),
    );
  }

  /**
   * A cleanup time: the left elements at `time - upper` (or `time`, for an upper bound ≤ 0) and
   * the right ones at `time + lower` (or `time`, for a lower bound > 0) registered this timer
   * and can join nothing more. Those two times are the only ones whose cleanup falls here.
   */
  protected override onTimer(timer: Timer): void {
    const { lower, upper } = this.options;
    this.leftBuffer().remove(upper <= 0 ? timer.timestamp : timer.timestamp - upper);
    this.rightBuffer().remove(lower <= 0 ? timer.timestamp + lower : timer.timestamp);
  }
}
