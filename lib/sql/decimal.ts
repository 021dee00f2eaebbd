/**
 * Exact DECIMAL arithmetic on decimal text, as Flink's DecimalData: an unscaled bigint and a
 * scale, rounded HALF_UP to the scale a result's type gives it. The text is what rows carry.
 */
interface Unscaled {
  readonly digits: bigint;
  readonly scale: number;
}

function parse(text: string): Unscaled {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) throw new Error(`"${text}" is not a decimal number`);
  const fraction = match[3] ?? '';
  const exponent = Number(match[4] ?? 0);
  let digits = BigInt(`${match[2] ?? ''}${fraction}` || '0');
  let scale = fraction.length - exponent;
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { digits: match[1] === '-' ? -digits : digits, scale };
}

function rescale(value: Unscaled, scale: number): bigint {
  if (scale >= value.scale) return value.digits * 10n ** BigInt(scale - value.scale);
  const divisor = 10n ** BigInt(value.scale - scale);
  const quotient = value.digits / divisor;
  const remainder = value.digits % divisor;
  const roundsAway = 2n * (remainder < 0n ? -remainder : remainder) >= divisor;
  return roundsAway ? quotient + (value.digits < 0n ? -1n : 1n) : quotient;
}

function format(digits: bigint, scale: number): string {
  const negative = digits < 0n;
  const text = (negative ? -digits : digits).toString().padStart(scale + 1, '0');
  const whole = scale === 0 ? text : `${text.slice(0, text.length - scale)}.${text.slice(text.length - scale)}`;
  return negative ? `-${whole}` : whole;
}

/** The number as DECIMAL text with exactly `scale` digits after the point, or null when it needs more than `precision` digits (Flink's overflow gives NULL). */
export function toDecimal(value: string | number, precision: number, scale: number): string | null {
  const parsed = parse(typeof value === 'number' ? numberText(value) : value);
  const digits = rescale(parsed, scale);
  if ((digits < 0n ? -digits : digits).toString().length > precision) return null;
  return format(digits, scale);
}

function numberText(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`${value} has no DECIMAL value`);
  return String(value);
}

export function decimalAdd(a: string, b: string, scale: number): string {
  return format(rescale(parse(a), scale) + rescale(parse(b), scale), scale);
}

export function decimalSubtract(a: string, b: string, scale: number): string {
  return format(rescale(parse(a), scale) - rescale(parse(b), scale), scale);
}

export function decimalMultiply(a: string, b: string, scale: number): string {
  const x = parse(a);
  const y = parse(b);
  return format(rescale({ digits: x.digits * y.digits, scale: x.scale + y.scale }, scale), scale);
}

/** a ÷ b rounded HALF_UP to `scale` digits; null when b is zero, as Flink's decimal division by zero. */
export function decimalDivide(a: string, b: string, scale: number): string | null {
  const x = parse(a);
  const y = parse(b);
  if (y.digits === 0n) return null;
  // x / y at scale + 1 digits, then rounded: shift the dividend so that the quotient has them.
  const shift = scale + 1 + y.scale - x.scale;
  const dividend = shift >= 0 ? x.digits * 10n ** BigInt(shift) : x.digits / 10n ** BigInt(-shift);
  return format(rescale({ digits: dividend / y.digits, scale: scale + 1 }, scale), scale);
}

export function decimalCompare(a: string, b: string): number {
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.scale, y.scale);
  const difference = rescale(x, scale) - rescale(y, scale);
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
}

export function decimalNegate(a: string): string {
  const x = parse(a);
  return format(-x.digits, x.scale);
}

export function decimalToNumber(a: string): number {
  return Number(a);
}
