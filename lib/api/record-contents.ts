/**
 * An error about a record whose `message` leaves the record's contents out, so that it is safe
 * for logs and for the dead letter's `sluice.error` header. `detail` (a parser's own message, or
 * the key it saw) may quote the record; it is shown only when the pipeline calls
 * `env.setRecordContentsInErrors(true)`. Throw one from a deserializer or a function to say
 * which part of its text is which.
 */
export class RedactableError extends Error {
  override readonly name = 'RedactableError';

  constructor(
    message: string,
    readonly detail: string,
  ) {
    super(message);
  }
}

/** Parses JSON text; a failure names the size of the text, not what it holds. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new RedactableError(`${what} (${Buffer.byteLength(text)} bytes) is not valid JSON`, (error as Error).message);
  }
}
