import type { FastifyBaseLogger as Logger } from 'fastify';
import { pino } from 'pino';
import type { Config } from '../config.ts';
import { loggerOptions } from '../log.ts';
import type { EventBus } from './bus.ts';
import { inProcessBus } from './in-process.ts';
import { jetStreamBus } from './jetstream.ts';

export interface EventBusOptions {
  /** NATS_URL: JetStream when set, in-process otherwise. */
  natsUrl?: string;
  /** EVENTS_RETENTION_HOURS: the stream's maximum age. */
  retentionHours: number;
  log: Logger;
  /** How the NATS connection names itself (default `fleet-risk-graph`). */
  name?: string;
  /** A durable consumer's event comes again after this long without its handler's acknowledgement (in-process: after a failure). */
  ackWaitMs?: number;
  /** JetStream's de-duplication window (tests shorten it). */
  duplicateWindowMs?: number;
  publishTimeoutMs?: number;
}

const ACK_WAIT_MS = 30_000;
const DUPLICATE_WINDOW_MS = 2 * 60_000;
const PUBLISH_TIMEOUT_MS = 5_000;
/** In-process, a failed handler is called again after this long (there is no other process to take the event). */
const IN_PROCESS_RETRY_MS = 1_000;

/** The process's one event bus (see bus.ts); open it once per process and close it on shutdown. */
export function openEventBus(options: EventBusOptions): Promise<EventBus> {
  if (!options.natsUrl) return Promise.resolve(inProcessBus({ log: options.log, retryMs: Math.min(options.ackWaitMs ?? IN_PROCESS_RETRY_MS, IN_PROCESS_RETRY_MS) }));
  return jetStreamBus({
    natsUrl: options.natsUrl, retentionHours: options.retentionHours, log: options.log, name: options.name ?? 'fleet-risk-graph',
    ackWaitMs: options.ackWaitMs ?? ACK_WAIT_MS, duplicateWindowMs: options.duplicateWindowMs ?? DUPLICATE_WINDOW_MS,
    publishTimeoutMs: options.publishTimeoutMs ?? PUBLISH_TIMEOUT_MS,
  });
}

/** The bus of a process as its configuration says (NATS_URL, EVENTS_RETENTION_HOURS), logging as `events`. */
export const openProcessEventBus = (config: Config) => openEventBus({
  natsUrl: config.NATS_URL, retentionHours: config.EVENTS_RETENTION_HOURS, log: pino(loggerOptions(config, 'events')),
});
