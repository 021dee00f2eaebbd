// Checks of what a user hands the API, made when the pipeline is built, so that a wrong argument
// fails there with the fix rather than at the first record, in every batch.

/** Where a user's argument is not what a method takes: what it was, for the message. */
export function described(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return 'a function';
  return typeof value === 'object' ? `an object with ${Object.keys(value).join(', ') || 'no keys'}` : `${typeof value} ${JSON.stringify(value)}`;
}

/** A user function, checked when the pipeline is built rather than at its first record. */
export function functionOf<F>(method: string, value: F, shape: string): F {
  if (typeof value !== 'function') throw new Error(`${method} takes a function ${shape}, not ${described(value)}`);
  return value;
}

/** An object with the method `member`, as a schema is, checked when the pipeline is built. */
export function objectWith<S>(method: string, value: S, member: string, example: string): S {
  if (typeof (value as Record<string, unknown> | null)?.[member] !== 'function') {
    throw new Error(`${method} takes an object with ${member}(...), e.g. ${example}, not ${described(value)}`);
  }
  return value;
}
