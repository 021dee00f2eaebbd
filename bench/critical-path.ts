// What a batch would bill on Lambda, modelled from what it did here: the handler's CPU, at the
// share of a vCPU its memory size buys, plus the longest chain of requests it waited on, each
// request at an assumed AWS latency instead of the emulators' and the local broker's.
//
// A request is taken to wait for every request that ended before it started, as it did in this
// run; requests in flight together wait only for the slowest. The CPU and the waits are added,
// as if no computation overlapped a wait: an upper bound for a handler that awaits as it goes.
import type { KafkaRequestSpan } from '../lib/kafka/index.js';

/** One request's round trip, on `performance.now()`'s clock; `operation` is `<service>.<name>`. */
export interface Span {
  readonly operation: string;
  readonly start: number;
  readonly end: number;
}

/** The requests a handler sends, AWS and Kafka alike, kept until drained. */
export class SpanLog {
  private spans: Span[] = [];
  /** For `RequestCounter.observe`. */
  readonly aws = (span: Span) => void this.spans.push(span);
  /** For `KafkaConnectionOptions.onRequest`. */
  readonly kafka = ({ api, start, end }: KafkaRequestSpan) => void this.spans.push({ operation: `Kafka.${api}`, start, end });

  drain(): Span[] {
    const drained = this.spans;
    this.spans = [];
    return drained;
  }
}

export const SERVICES = ['DynamoDB', 'S3', 'Kafka'] as const;
export type Service = (typeof SERVICES)[number];

/** Milliseconds a round trip takes in AWS, by service: the assumptions the report states. */
export const ASSUMED_LATENCY_MS: Readonly<Record<Service, number>> = { DynamoDB: 4, S3: 20, Kafka: 2 };

/** Lambda gives a function one full vCPU at 1,769 MB, and a share in proportion below it. */
const MB_PER_VCPU = 1_769;

/** The memory size serverless.yml deploys the processor with. */
export const DEPLOYED_MEMORY_MB = 1_024;

/** The deployed memory size, and the size at which a function has a whole vCPU. */
export const MODELLED_MEMORY_MB = [DEPLOYED_MEMORY_MB, MB_PER_VCPU] as const;

/**
 * kafkajs times a request in whole milliseconds, so a Kafka request's start may read up to
 * 1 ms early. It is taken as late as it can have been, which can only add waits to the model.
 */
const KAFKA_START_RESOLUTION_MS = 1;

export function serviceOf(operation: string): Service {
  const service = SERVICES.find((name) => operation.startsWith(`${name}.`));
  if (service) return service;
  throw new Error(`No latency is assumed for ${operation}`);
}

export interface CriticalPath {
  /** The waits of the longest chain, at the assumed latencies. */
  readonly waitMs: number;
  /** The round trips on it, by service. */
  readonly roundTrips: Readonly<Record<Service, number>>;
}

interface Reached {
  readonly at: number;
  readonly roundTrips: Readonly<Record<Service, number>>;
}

const NOTHING_YET: Reached = { at: 0, roundTrips: { DynamoDB: 0, S3: 0, Kafka: 0 } };

/** The longest chain of requests that waited on one another, at the assumed latencies. */
export function criticalPath(spans: readonly Span[]): CriticalPath {
  const requests = spans
    .map((span) => {
      const service = serviceOf(span.operation);
      const start = service === 'Kafka' ? Math.min(span.end, span.start + KAFKA_START_RESOLUTION_MS) : span.start;
      return { service, start, end: span.end };
    })
    // Sorted by end, every request that one waited for comes before it.
    .sort((a, b) => a.end - b.end);
  const reached: Reached[] = [];
  let longest = NOTHING_YET;
  for (const request of requests) {
    let after = NOTHING_YET;
    reached.forEach((earlierReached, index) => {
      const earlier = requests[index];
      if (earlier && earlier.end <= request.start && earlierReached.at > after.at) after = earlierReached;
    });
    const done: Reached = {
      at: after.at + ASSUMED_LATENCY_MS[request.service],
      roundTrips: { ...after.roundTrips, [request.service]: after.roundTrips[request.service] + 1 },
    };
    reached.push(done);
    if (done.at > longest.at) longest = done;
  }
  return { waitMs: longest.at, roundTrips: longest.roundTrips };
}

/** Billed milliseconds of a batch that used `cpuMs` of this machine's CPU and waited `waitMs`. */
export function modelledBilledMs(cpuMs: number, waitMs: number, memoryMb: number): number {
  return Math.ceil(cpuMs / Math.min(1, memoryMb / MB_PER_VCPU) + waitMs);
}
