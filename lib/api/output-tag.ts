/** Names a side output and the type of its elements, as Flink's `OutputTag<T>`. */
export class OutputTag<T> {
  /** Only carries `T`; never set. */
  declare readonly elementType?: T;

  constructor(readonly id: string) {
    if (id.trim() === '') throw new Error('An OutputTag needs a non-empty id');
  }
}
