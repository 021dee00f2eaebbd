// A worker thread of a simulation campaign: runs the schedules it is sent, one at a time.
import { parentPort, workerData } from 'node:worker_threads';
import { drawSchedule, type ScheduleOverrides } from './schedule.js';
import { simulate } from './world.js';

const { overrides } = workerData as { overrides: ScheduleOverrides };
parentPort?.on('message', (seed: number) => {
  void simulate(drawSchedule(seed, overrides)).then(({ problems, counts, steps }) => {
    parentPort?.postMessage({ seed, problems, result: { counts, steps } });
  });
});
