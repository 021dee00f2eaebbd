import type { KeyedBroadcastProcessFunction, RuntimeContext, BroadcastState } from '../api/functions.js';
import type { AnyStateDescriptor, MapStateDescriptor } from '../api/state.js';
import { BROADCAST_KEY } from '../api/transformations.js';
import { keyRef, type KeyRef } from '../state/keys.js';
import { KeyedProcessOperator } from './basic-operators.js';
import { mapState } from './keyed-state.js';

interface TaggedElement {
  readonly input: 1 | 2;
  readonly value: unknown;
}

type AnyMapDescriptor = MapStateDescriptor<string | number, unknown>;

/**
 * A keyed stream connected with a broadcast stream, as Flink's CoBroadcastWithKeyedOperator.
 * Its input is both sides tagged: keyed elements under their key, and broadcast elements, which
 * every shard receives, under {@link BROADCAST_KEY}, where the shard keeps its copy of the
 * broadcast state. The keyed side reads that copy whatever its own key.
 */
export class KeyedBroadcastProcessOperator<K, S> extends KeyedProcessOperator<K, TaggedElement, unknown, S> {
  private readonly broadcastKey: KeyRef;

  constructor(
    fn: KeyedBroadcastProcessFunction<K, unknown, unknown, unknown, S>,
    private readonly descriptors: readonly AnyMapDescriptor[],
    maxParallelism: number,
  ) {
    // The function's contexts reach the broadcast state through this, set once the operator exists.
    const access: { state?: (descriptor: AnyMapDescriptor) => BroadcastState<string | number, unknown> } = {};
    const broadcastState = (descriptor: AnyMapDescriptor) => {
      if (!access.state) throw new Error('The broadcast state is not available before the operator opens');
      return access.state(descriptor);
    };
    super({
      ...(fn.open ? { open: (state: RuntimeContext) => fn.open?.(state) as S } : {}),
      processElement: (element, context, out) => {
        const clocks = {
          currentWatermark: () => context.timerService().currentWatermark(),
          currentProcessingTime: () => context.timerService().currentProcessingTime(),
        };
        if (element.input === 1) fn.processElement(element.value, { ...context, ...clocks, getBroadcastState: broadcastState as never }, out);
        else {
          const { timestamp, output } = context;
          fn.processBroadcastElement(element.value, { timestamp, output, ...clocks, getBroadcastState: broadcastState as never }, out);
        }
      },
      ...(fn.onTimer ? { onTimer: (timestamp, context, out) => fn.onTimer?.(timestamp, { ...context, getBroadcastState: broadcastState as never }, out) } : {}),
    });
    access.state = (descriptor) => this.broadcastState(descriptor);
    this.broadcastKey = keyRef(BROADCAST_KEY, maxParallelism);
  }

  override describeState(): AnyStateDescriptor[] {
    return [...super.describeState(), ...this.descriptors];
  }

  /** The shard's copy of a broadcast state, whichever key the element or timer at hand has. */
  private broadcastState(descriptor: AnyMapDescriptor): BroadcastState<string | number, unknown> {
    if (!this.descriptors.some((d) => d.name === descriptor.name)) {
      throw new Error(
        `${this.services.operatorName}: "${descriptor.name}" is not a broadcast state of this stream; pass its descriptor to broadcast(...)`,
      );
    }
    const key = this.broadcastKey;
    return mapState({ ...this.services, currentKey: () => key }, descriptor);
  }
}
