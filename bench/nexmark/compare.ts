// Two engines' results of a query compared as Flink's semantics make them comparable: appended
// rows as a multiset (their order across partitions is the engines' own), and an upsert sink's
// changelog by the table it leaves, key by key, after its updates and deletions are applied.
/** A record of a result topic, or of a test harness's output. */
export interface ResultRecord {
  readonly key?: Buffer | string | null;
  readonly value: Buffer | string | null;
}

export interface Comparison {
  readonly equal: boolean;
  /** Rows (appends) or keys (upserts) on each side. */
  readonly sluice: number;
  readonly flink: number;
  /** The first row in one result and not in the other, for the note. */
  readonly difference?: string;
}

export interface CompareOptions {
  readonly updating: boolean;
  /**
   * A window result's end column (or, with `windowMs`, a time within a tumbling window of that
   * size), and the watermark Sluice ends at: windows ending after it are fired only by the end of
   * Flink's bounded input, and left out.
   */
  readonly windowEnd?: WindowEnd & { readonly finalWatermarkMs: number };
}

/** Where a query's rows say which window fired them. */
export interface WindowEnd {
  readonly column: string;
  readonly windowMs?: number;
}

/** JSON with numbers as numbers, whatever trailing zeros a DECIMAL was written with. */
function canonical(json: Buffer | string): string {
  return JSON.stringify(JSON.parse(json.toString()));
}

function sqlTimestampMs(text: string): number {
  return Date.parse(`${text.replace(' ', 'T')}Z`);
}

/** The rows an engine's records leave: appends in full, upserts as each key's last value. */
export function resultRows(records: readonly ResultRecord[], { updating, windowEnd }: CompareOptions): string[] {
  const endOf = (time: number) => (windowEnd?.windowMs ? Math.floor(time / windowEnd.windowMs) * windowEnd.windowMs + windowEnd.windowMs : time);
  const fired = (value: Buffer | string) =>
    !windowEnd || endOf(sqlTimestampMs(String((JSON.parse(value.toString()) as Record<string, unknown>)[windowEnd.column]))) <= windowEnd.finalWatermarkMs + 1;
  if (!updating) return records.flatMap(({ value }) => (value !== null && fired(value) ? [canonical(value)] : [])).sort();
  const table = new Map<string, string>();
  for (const { key, value } of records) {
    if (key === null || key === undefined) throw new Error('an upsert sink wrote a record without a key');
    if (value === null) table.delete(canonical(key));
    else table.set(canonical(key), canonical(value));
  }
  return [...table.entries()].map(([key, value]) => `${key} ${value}`).sort();
}

export function compareResults(sluice: readonly ResultRecord[], flink: readonly ResultRecord[], options: CompareOptions): Comparison {
  return compareRows(resultRows(sluice, options), resultRows(flink, options));
}

/** Two results' rows (resultRows) compared as multisets. */
export function compareRows(ours: readonly string[], theirs: readonly string[]): Comparison {
  const counted = (rows: readonly string[]) => rows.reduce((counts, row) => counts.set(row, (counts.get(row) ?? 0) + 1), new Map<string, number>());
  const [ourCounts, theirCounts] = [counted(ours), counted(theirs)];
  const onlyOurs = ours.find((row) => (ourCounts.get(row) ?? 0) > (theirCounts.get(row) ?? 0));
  const onlyTheirs = theirs.find((row) => (theirCounts.get(row) ?? 0) > (ourCounts.get(row) ?? 0));
  const difference = onlyOurs !== undefined ? `only in Sluice's: ${onlyOurs}` : onlyTheirs !== undefined ? `only in Flink's: ${onlyTheirs}` : undefined;
  return { equal: difference === undefined, sluice: ours.length, flink: theirs.length, ...(difference ? { difference } : {}) };
}
