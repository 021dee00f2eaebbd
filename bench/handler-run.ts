// One run of the handler table (bench/handler.ts) in a process of its own, so that no run warms
// the next: builds its events, runs Sluice's handler or the floor, prints its figures.
import { printResult, readJsonArgument } from './child-io.js';
import { buildEvents, EmulatorHost, runFloor, runSluice, type RunRequest } from './handler.js';

const { which, brokers, guarantee, batch, count, warmUpBatches, name, input, emulators } = readJsonArgument('handler-run.ts <run request as JSON>') as RunRequest;
const host = EmulatorHost.attach(emulators);
const events = buildEvents(input, count, batch, brokers);
const figures =
  which === 'sluice'
    ? await runSluice(brokers, host, guarantee, batch, events, name, input, undefined, { warmUpBatches })
    : await runFloor(brokers, host, batch, events, name, { warmUpBatches });
printResult(figures);
// Clients' sockets may keep the process alive a while; the figures are out.
process.exit(0);
