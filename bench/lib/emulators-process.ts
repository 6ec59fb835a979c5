import { startEmulators } from '../../infra/local/emulators.ts';

// The emulators (dynalite, fauxqs) in a process of their own, so DynamoDB's and S3's work runs
// beside the service, as it does in AWS, instead of in the event loop of the functions being
// measured. Prints its endpoints as one JSON line; stops when its parent closes stdin or exits.

const emulators = await startEmulators();
process.stdout.write(
  `${JSON.stringify({ dynamodbEndpoint: emulators.dynamodbEndpoint, fauxqsEndpoint: emulators.fauxqsEndpoint })}\n`,
);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await emulators.stop();
  process.exit(0);
};
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
