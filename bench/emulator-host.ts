// DynamoDB (dynalite) and S3 (s3rver) in a process of their own, so that a measurement of the
// handlers in the parent counts none of the emulation: prints their client options as its
// RESULT line, and stops when its standard input closes.
import { startDynamoDbEmulator, startS3Emulator } from '../lib/offline/emulators.js';
import { printResult } from './child-io.js';

const dynamo = await startDynamoDbEmulator();
const s3 = await startS3Emulator();
printResult({ dynamo: dynamo.clientOptions, s3: s3.clientOptions });
process.stdin.resume();
process.stdin.on('end', () => {
  void Promise.all([dynamo.close(), s3.close()]).then(() => process.exit(0));
});
