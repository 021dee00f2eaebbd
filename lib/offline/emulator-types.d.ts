// dynalite ships no types; this names what Sluice uses of it.
declare module 'dynalite' {
  import type { Server } from 'node:http';
  interface DynaliteOptions {
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    path?: string;
  }
  export default function dynalite(options?: DynaliteOptions): Server;
}
