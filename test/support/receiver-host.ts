/**
 * A webhook receiver run as its own process (e.g. inside another host's network namespace): prints
 * `{"url": ...}` once listening on loopback, then one JSON line per delivery it accepts.
 */
import { startReceiver } from '../webhooks/receiver.ts';

const receiver = await startReceiver((r) => process.stdout.write(`${JSON.stringify(r)}\n`));
process.stdout.write(`${JSON.stringify({ url: receiver.url })}\n`);
process.on('SIGTERM', () => void receiver.close().then(() => process.exit(0)));
