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

export const DAY_MILLIS = 86_400_000;

/** The DATE (days since 1970-01-01) a wall-clock time falls on. */
export function dateOfWallClock(wall: number): number {
  return Math.floor(wall / DAY_MILLIS);
}

/** A DATE's midnight as a wall-clock time. */
export function wallClockOfDate(days: number): number {
  return days * DAY_MILLIS;
}

/** `yyyy-MM-dd`, as Flink shows a DATE. */
export function formatDate(days: number): string {
  return new Date(wallClockOfDate(days)).toISOString().slice(0, 10);
}

/** A calendar day (its month from 1) and time of day as a wall-clock time; undefined for a day the month lacks, which Date.UTC would roll over (2026-02-30 into March) and Flink refuses. */
function calendarWallClock(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, milli = 0): number | undefined {
  const wall = Date.UTC(year, month - 1, day, hour, minute, second, milli);
  const date = new Date(wall);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? wall : undefined;
}

/** Reads `yyyy-M-d` (spaces around it ignored, as Flink's CAST does) as a DATE; undefined when it is not one. */
export function parseDate(text: string): number | undefined {
  const match = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(text.trim());
  const wall = match ? calendarWallClock(Number(match[1]), Number(match[2]), Number(match[3])) : undefined;
  return wall === undefined ? undefined : dateOfWallClock(wall);
}

/** A DATE moved by a day-time interval: whole days only, truncated toward zero, as Flink adds INTERVAL '25' HOUR as one day. */
export function shiftDate(days: number, millis: number): number {
  return days + Math.trunc(millis / DAY_MILLIS);
}

/** The pattern letters TO_DATE reads, Java's SimpleDateFormat's, each with the Date.UTC argument it gives. */
const PATTERN_FIELDS: Readonly<Record<string, number>> = { y: 0, M: 1, d: 2, H: 3, m: 4, s: 5, S: 6 };

/**
 * Reads a text by a Java-style pattern (TO_DATE's `yyyy/MM/dd`, `yyyyMMdd`) as a wall-clock
 * time; undefined when it does not match. A field followed by another reads exactly as many
 * digits as its letters, as SimpleDateFormat does for `yyyyMMdd`; else as many as there are.
 * Other characters must match themselves; a letter Sluice does not read is an error naming it.
 */
export function parseByPattern(text: string, pattern: string): number | undefined {
  const parts = [1970, 1, 1, 0, 0, 0, 0];
  let at = 0;
  for (let i = 0; i < pattern.length; ) {
    const letter = pattern.charAt(i);
    let run = 1;
    while (pattern.charAt(i + run) === letter) run++;
    const field = PATTERN_FIELDS[letter];
    if (field === undefined && /[a-zA-Z]/.test(letter)) throw new Error(`the pattern '${pattern}' has the letter ${letter}, which Sluice does not read: use y, M, d, H, m, s and S`);
    if (field === undefined) {
      if (text.slice(at, at + run) !== letter.repeat(run)) return undefined;
      at += run;
    } else {
      const adjacent = /[a-zA-Z]/.test(pattern.charAt(i + run));
      const digits = (adjacent ? new RegExp(`^\\d{${run}}`) : /^\d+/).exec(text.slice(at))?.[0];
      if (digits === undefined) return undefined;
      parts[field] = Number(digits);
      at += digits.length;
    }
    i += run;
  }
  if (at !== text.length) return undefined;
  const [year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, milli = 0] = parts;
  return calendarWallClock(year, month, day, hour, minute, second, milli);
}

/**
 * A wall-clock time moved by whole months, its time of day kept and its day of the month capped
 * at the new month's last day (2026-01-31 plus a month is 2026-02-28), as Flink adds a year-month
 * interval.
 */
export function addMonths(wall: number, months: number): number {
  const date = new Date(wall);
  const month = date.getUTCFullYear() * 12 + date.getUTCMonth() + months;
  const [year, monthOfYear] = [Math.floor(month / 12), ((month % 12) + 12) % 12];
  const lastDay = new Date(Date.UTC(year, monthOfYear + 1, 0)).getUTCDate();
  const timeOfDay = wall - Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  return Date.UTC(year, monthOfYear, Math.min(date.getUTCDate(), lastDay)) + timeOfDay;
}

/** A DATE moved by whole months, as addMonths moves its midnight. */
function addMonthsToDate(days: number, months: number): number {
  return dateOfWallClock(addMonths(wallClockOfDate(days), months));
}

/** Whole months from one DATE to another, truncated toward zero: the most that, added to the earlier, do not pass the later. */
function monthsBetweenDates(from: number, to: number): number {
  if (to < from) return -monthsBetweenDates(to, from);
  // No month is longer than 31 days, so this is at most the answer.
  let months = Math.trunc((to - from) / 31);
  while (addMonthsToDate(from, months) < to && addMonthsToDate(from, months + 1) <= to) months++;
  return months;
}

/**
 * Whole months from one time to another, as Flink's TIMESTAMPDIFF counts them (Calcite's
 * subtractMonths): the months between their days, one fewer when the earlier day plus those
 * months is the later day and the later time of day is the earlier. On epoch milliseconds, so
 * a TIMESTAMP_LTZ's months are UTC's whatever the session's zone, as in Flink.
 */
export function monthsBetween(from: number, to: number): number {
  const [fromDay, toDay] = [dateOfWallClock(from), dateOfWallClock(to)];
  const months = monthsBetweenDates(fromDay, toDay);
  const sameDay = addMonthsToDate(fromDay, months) === toDay;
  return sameDay && to - wallClockOfDate(toDay) < from - wallClockOfDate(fromDay) ? months - 1 : months;
}

type DateTimeKind = 'DATE' | 'TIMESTAMP' | 'TIMESTAMP_LTZ';

/** A step of a day-time interval: a DATE's in whole days (see shiftDate), a timestamp's exact. */
export function byMillis(kind: DateTimeKind, millis: number): (value: number) => number {
  return kind === 'DATE' ? (days) => shiftDate(days, millis) : (value) => value + millis;
}

/** A step of a year-month interval (see addMonths), a TIMESTAMP_LTZ's on its UTC time whatever the session's zone, as Flink's. */
export function byMonths(kind: DateTimeKind, months: number): (value: number) => number {
  return kind === 'DATE' ? (days) => addMonthsToDate(days, months) : (millis) => addMonths(millis, months);
}

/** TIMESTAMPADD's and TIMESTAMPDIFF's units, as the parser lists them: a duration, or a number of months. */
export const CALENDAR_UNITS: Readonly<Record<string, { readonly millis: number } | { readonly months: number }>> = {
  YEAR: { months: 12 },
  QUARTER: { months: 3 },
  MONTH: { months: 1 },
  WEEK: { millis: 7 * DAY_MILLIS },
  DAY: { millis: DAY_MILLIS },
  HOUR: { millis: 3_600_000 },
  MINUTE: { millis: 60_000 },
  SECOND: { millis: 1_000 },
};

/** The units FLOOR and CEIL round a time to. */
export const ROUNDING_UNITS: readonly string[] = [...Object.keys(CALENDAR_UNITS), 'MILLISECOND'];

/**
 * A wall-clock time rounded down to a unit, or up unless it is on one, as FLOOR(t TO unit) and
 * CEIL(t TO unit) round it: a WEEK from Sunday, a QUARTER from January, April, July, October.
 * Rounding up to a WEEK or longer looks at the day alone, as Flink's does: the first of a month
 * at 00:00:01 is already on a MONTH.
 */
export function roundWallClock(wall: number, unit: string, up: boolean): number {
  const step = unit === 'MILLISECOND' ? { millis: 1 } : CALENDAR_UNITS[unit];
  if (step === undefined) throw new Error(`no unit ${unit} to round a time to`);
  if ('millis' in step && unit !== 'WEEK') {
    const floor = Math.floor(wall / step.millis) * step.millis;
    return up && floor !== wall ? floor + step.millis : floor;
  }
  const day = dateOfWallClock(wall);
  let floor: number;
  let next: (floor: number) => number;
  if ('months' in step) {
    const date = new Date(wall);
    const month = date.getUTCMonth();
    floor = Date.UTC(date.getUTCFullYear(), month - (month % step.months), 1);
    next = (start) => addMonths(start, step.months);
  } else {
    // A week from Sunday, not from the epoch: 1970-01-01 was a Thursday, the fifth day of its week.
    floor = wallClockOfDate(day - ((((day + 4) % 7) + 7) % 7));
    next = (start) => start + step.millis;
  }
  return up && floor !== wallClockOfDate(day) ? next(floor) : floor;
}
