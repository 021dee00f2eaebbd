import { createHash } from 'node:crypto';

/** Text that barely deflates (base64 of a hash chain seeded by `seed`), `length` characters long. */
export function noise(seed: string, length: number): string {
  const blocks: Buffer[] = [];
  let block = createHash('sha512').update(seed).digest();
  for (let bytes = 0; bytes * 4 < length * 3 + 4; bytes += block.length) {
    blocks.push(block);
    block = createHash('sha512').update(block).digest();
  }
  return Buffer.concat(blocks).toString('base64').slice(0, Math.floor(length));
}
