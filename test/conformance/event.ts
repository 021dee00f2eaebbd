/** One input record of a conformance scenario (runner/Event.java on the Flink side). */
export interface Event {
  readonly key: string;
  readonly value: number;
  /** The event time, also given to the pipeline as the record's timestamp. */
  readonly timestamp: number;
}
