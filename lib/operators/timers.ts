import type { KeyRef } from '../state/keys.js';

export type TimeDomain = 'EVENT_TIME' | 'PROCESSING_TIME';

/** A timer of one operator: fires for `key` at `timestamp`; `namespace` tells what for (a window, or '' for user timers). */
export interface Timer {
  readonly key: KeyRef;
  readonly timestamp: number;
  readonly namespace: string;
}

function timerId(timer: Timer): string {
  return `${timer.timestamp}\u0000${timer.key.serialized}\u0000${timer.namespace}`;
}

/**
 * The timers of one operator in one time domain, earliest first. Registering a timer twice
 * keeps one; deleting a timer that is not there does nothing.
 */
export class TimerQueue {
  private readonly timers = new Map<string, Timer>();
  private heap: Timer[] = [];

  register(timer: Timer): void {
    const id = timerId(timer);
    if (this.timers.has(id)) return;
    this.timers.set(id, timer);
    this.heap.push(timer);
    this.siftUp(this.heap.length - 1);
  }

  delete(timer: Timer): void {
    this.timers.delete(timerId(timer));
  }

  /** Removes and returns the earliest live timer at or before `time`. */
  pollDue(time: number): Timer | undefined {
    for (;;) {
      const top = this.heap[0];
      if (!top || top.timestamp > time) return undefined;
      this.removeTop();
      const id = timerId(top);
      if (this.timers.get(id) === top) {
        this.timers.delete(id);
        return top;
      }
    }
  }

  /** Every live timer, earliest first. */
  all(): Timer[] {
    return [...this.timers.values()].sort((a, b) => a.timestamp - b.timestamp);
  }

  get size(): number {
    return this.timers.size;
  }

  private removeTop(): void {
    const last = this.heap.pop();
    if (last && this.heap.length > 0) {
      this.heap[0] = last;
      this.siftDown(0);
    }
  }

  private less(a: number, b: number): boolean {
    return (this.heap[a]?.timestamp ?? 0) < (this.heap[b]?.timestamp ?? 0);
  }

  private swap(a: number, b: number): void {
    const heap = this.heap;
    [heap[a], heap[b]] = [heap[b] as Timer, heap[a] as Timer];
  }

  private siftUp(index: number): void {
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(index: number): void {
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < this.heap.length && this.less(left, smallest)) smallest = left;
      if (right < this.heap.length && this.less(right, smallest)) smallest = right;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}
