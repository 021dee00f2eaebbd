import type { Plan } from './plan.js';

/** Every topic a plan reads and writes, worked out in one place. */
export interface PlanTopics {
  /** Topics the sources name (sources that subscribe by pattern are in `sourcePatterns`). */
  readonly sources: readonly string[];
  readonly sourcePatterns: readonly RegExp[];
  /** Topics the sinks write (a sink that picks its topic per element names none). */
  readonly sinks: readonly string[];
  /** The repartition topics that keyBys create, with their partition counts. */
  readonly repartitions: readonly { readonly topic: string; readonly partitions: number }[];
  /** The dead-letter topic of the bad-record policy, if it has one. */
  readonly deadLetters: readonly string[];
}

export function planTopics(plan: Pick<Plan, 'stages' | 'badRecordPolicy'>): PlanTopics {
  const sources = new Set<string>();
  const sourcePatterns: RegExp[] = [];
  const sinks = new Set<string>();
  const repartitions: { topic: string; partitions: number }[] = [];
  for (const stage of plan.stages) {
    const { input } = stage;
    if (input.kind === 'repartition') {
      repartitions.push({ topic: input.topic, partitions: input.partitions });
    } else {
      const { topics, topicPattern } = input.source.source.config;
      for (const topic of topics ?? []) sources.add(topic);
      if (topicPattern) sourcePatterns.push(topicPattern);
    }
    for (const node of stage.nodes) {
      const topic = node.role === 'sink' ? node.transformation.sink.config.serializer.topic : undefined;
      if (topic) sinks.add(topic);
    }
  }
  const policy = plan.badRecordPolicy;
  return {
    sources: [...sources],
    sourcePatterns,
    sinks: [...sinks],
    repartitions,
    deadLetters: policy.kind === 'dead-letter' ? [policy.topic] : [],
  };
}
