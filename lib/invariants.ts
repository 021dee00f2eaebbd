// Assertions at the protocol's invariants (docs/PROTOCOL.md, DESIGN.md's exactly-once
// invariants), kept in production as TigerBeetle keeps its own: a broken invariant stops the
// actor before it writes anything built on it, and says which shard and which values, instead
// of committing output that a later check would find wrong or never find.

/** A protocol invariant did not hold: a bug in Sluice, never a fault of the environment. */
export class InvariantViolation extends Error {
  override readonly name = 'InvariantViolation';
}

/**
 * Throws an {@link InvariantViolation} when `holds` is false. `what` says where, in terms of the
 * protocol, and with the values that broke it; it is built only when the invariant fails.
 */
export function invariant(holds: boolean, what: () => string): asserts holds {
  if (!holds) throw new InvariantViolation(`Invariant broken: ${what()}. This is a bug in Sluice: please report it with this message.`);
}
