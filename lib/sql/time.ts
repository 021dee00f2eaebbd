/**
 * Timestamps as Flink SQL shows and reads them. A TIMESTAMP_LTZ is an instant, shown in the
 * session's time zone (`table.local-time-zone`); a TIMESTAMP is a wall-clock time, held as the
 * epoch milliseconds it would be in UTC.
 */
const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** Checks a zone id ('UTC', 'Europe/Berlin', '+08:00') once, at plan time. */
export function checkTimeZone(zone: string): void {
  if (fixedOffset(zone) !== undefined) return;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    throw new Error(`table.local-time-zone '${zone}' is not a time zone: give an id such as 'UTC', 'Europe/Berlin' or '+08:00'`);
  }
}

function fixedOffset(zone: string): number | undefined {
  const match = /^(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?$/.exec(zone);
  if (!match) return zone === 'UTC' || zone === 'GMT' || zone === 'Z' ? 0 : undefined;
  return (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3] ?? 0)) * 60_000;
}

/** How far the zone's wall clock is ahead of UTC at the instant. */
export function zoneOffset(zone: string, epochMillis: number): number {
  const fixed = fixedOffset(zone);
  if (fixed !== undefined) return fixed;
  let format = offsetFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    offsetFormats.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(epochMillis)).map((p) => [p.type, p.value]));
  const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return wall - (epochMillis - (((epochMillis % 1000) + 1000) % 1000));
}

/** A wall-clock time (as UTC epoch milliseconds) as the instant it is in the zone. */
export function wallClockToInstant(zone: string, wall: number): number {
  const guess = wall - zoneOffset(zone, wall);
  return wall - zoneOffset(zone, guess);
}

export function instantToWallClock(zone: string, instant: number): number {
  return instant + zoneOffset(zone, instant);
}

/** `yyyy-MM-dd HH:mm:ss.SSS`, with as many fraction digits as the precision. */
export function formatWallClock(wall: number, precision = 3): string {
  const iso = new Date(wall).toISOString();
  const seconds = `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
  return precision > 0 ? `${seconds}.${iso.slice(20, 23).padEnd(precision, '0').slice(0, precision)}` : seconds;
}

/** Reads `yyyy-MM-dd[ HH:mm[:ss[.fff]]]` (or with a T) as a wall-clock time; undefined when it is not one. */
export function parseWallClock(text: string): number | undefined {
  const match = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?$/.exec(text.trim());
  if (!match) return undefined;
  const millis = Number((match[7] ?? '0').padEnd(3, '0').slice(0, 3));
  const wall = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), Number(match[4] ?? 0), Number(match[5] ?? 0), Number(match[6] ?? 0), millis);
  return Number.isNaN(wall) ? undefined : wall;
}

const FORMAT_FIELDS: readonly [string, (d: Date) => string][] = [
  ['yyyy', (d) => String(d.getUTCFullYear()).padStart(4, '0')],
  ['MM', (d) => String(d.getUTCMonth() + 1).padStart(2, '0')],
  ['dd', (d) => String(d.getUTCDate()).padStart(2, '0')],
  ['HH', (d) => String(d.getUTCHours()).padStart(2, '0')],
  ['mm', (d) => String(d.getUTCMinutes()).padStart(2, '0')],
  ['ss', (d) => String(d.getUTCSeconds()).padStart(2, '0')],
  ['SSS', (d) => String(d.getUTCMilliseconds()).padStart(3, '0')],
];

/** DATE_FORMAT's Java-style patterns, for the fields above; other letters are kept as they are. */
export function formatPattern(wall: number, pattern: string): string {
  const date = new Date(wall);
  let out = '';
  for (let i = 0; i < pattern.length; ) {
    const field = FORMAT_FIELDS.find(([letters]) => pattern.startsWith(letters, i));
    if (field) {
      out += field[1](date);
      i += field[0].length;
    } else {
      out += pattern.charAt(i);
      i++;
    }
  }
  return out;
}
