import { setTimeout as sleep } from 'node:timers/promises';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy, DeliverPolicy, DiscardPolicy, jetstream, JetStreamApiError, jetstreamManager, RetentionPolicy, StorageType,
  type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg, type StreamConfig,
} from '@nats-io/jetstream';
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { CommittedEvent, Consumer, EventBus } from './bus.ts';
import { liveFanout } from './live-fanout.ts';
import { EVENTS_STREAM, EVENTS_SUBJECT_ROOT, subjectOf } from './subjects.ts';

export interface JetStreamBusOptions {
  natsUrl: string;
  retentionHours: number;
  log: Logger;
  /** How long a durable consumer's event waits for its handler's acknowledgement before it comes again. */
  ackWaitMs: number;
  /** The stream's de-duplication window (message id = event id). */
  duplicateWindowMs: number;
  /** How long publish() waits for the stream's acknowledgement. */
  publishTimeoutMs: number;
  /** The connection's name, as the server lists it. */
  name: string;
}

/** JetStream's "stream name already in use with a different configuration". */
const STREAM_NAME_IN_USE = 10058;
/** Waits between attempts to (re)start a consumer, doubling up to the last. */
const RETRY_FIRST_MS = 200;
const RETRY_MAX_MS = 5_000;
/** Events a durable consumer's process takes ahead of its handler: small, so that other processes share the load. */
const DURABLE_BATCH = 16;

/** Creates the stream of committed events, or brings an existing one to this configuration. */
async function ensureStream(jsm: JetStreamManager, options: JetStreamBusOptions) {
  const changeable: Partial<StreamConfig> = {
    subjects: [`${EVENTS_SUBJECT_ROOT}.>`], discard: DiscardPolicy.Old, num_replicas: 1,
    max_age: nanos(options.retentionHours * 3_600_000), duplicate_window: nanos(options.duplicateWindowMs),
  };
  try {
    await jsm.streams.add({ ...changeable, name: EVENTS_STREAM, storage: StorageType.File, retention: RetentionPolicy.Limits });
  } catch (error) {
    if (!(error instanceof JetStreamApiError) || error.code !== STREAM_NAME_IN_USE) throw error;
    await jsm.streams.update(EVENTS_STREAM, changeable);
  }
}

const decode = (message: JsMsg) => message.json<CommittedEvent>();

/** Runs `start` until `stopped()`, again with backoff whenever it fails or ends; logs the first failure of a series. */
async function keepRunning(what: string, log: Logger, stopped: () => boolean, start: () => Promise<void>) {
  let wait = RETRY_FIRST_MS;
  let failing = false;
  while (!stopped()) {
    try {
      await start();
      wait = RETRY_FIRST_MS;
      if (failing) log.info(`events: ${what} running again`);
      failing = false;
    } catch (error) {
      if (!failing && !stopped()) log.warn({ err: error }, `events: ${what} failed; retrying`);
      failing = true;
    }
    if (stopped()) return;
    await sleep(wait);
    wait = Math.min(wait * 2, RETRY_MAX_MS);
  }
}

/**
 * The bus on NATS JetStream (nats-server 2.9 or later): one stream of committed events, file storage,
 * kept EVENTS_RETENTION_HOURS; publish() awaits its acknowledgement. The connection reconnects forever.
 */
export async function jetStreamBus(options: JetStreamBusOptions): Promise<EventBus> {
  const { log } = options;
  const nc: NatsConnection = await connect({
    servers: options.natsUrl, name: options.name, maxReconnectAttempts: -1, reconnectTimeWait: 500,
  });
  let closed = false;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') log.warn({ server: status.server }, 'events: NATS connection lost; reconnecting');
      else if (status.type === 'reconnect') log.info({ server: status.server }, 'events: NATS connection back');
    }
  })();
  let jsm: JetStreamManager;
  let js: JetStreamClient;
  try {
    jsm = await jetstreamManager(nc);
    await ensureStream(jsm, options);
    js = jetstream(nc);
  } catch (error) {
    await nc.close();
    throw error;
  }

  const live = liveFanout(log);
  const running = new Set<{ stop(): Promise<void> }>();
  let liveStarted = false;

  /**
   * This process's ordered consumer: every event stored from now on, in stream order. The client
   * recreates it from the last sequence it saw after a reconnection, a server restart or missed
   * heartbeats; should its messages end, it starts again from there.
   */
  const startLive = () => {
    liveStarted = true;
    let lastSeq = 0;
    let messages: ConsumerMessages | undefined;
    const done = keepRunning('live consumer', log, () => closed, async () => {
      const consumer = await js.consumers.get(EVENTS_STREAM, lastSeq
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: lastSeq + 1 }
        : { deliver_policy: DeliverPolicy.New });
      messages = await consumer.consume();
      for await (const message of messages) {
        lastSeq = message.seq;
        live.emit(decode(message));
      }
    });
    running.add({ async stop() { messages?.stop(); await done; } });
  };

  return {
    async publish(event) {
      await js.publish(subjectOf(event), JSON.stringify(event), { msgID: event.eventId, timeout: options.publishTimeoutMs });
    },
    live(listener) {
      if (!liveStarted) startLive();
      return live.add(listener);
    },
    async consume(name, handler): Promise<Consumer> {
      const ackWait = nanos(options.ackWaitMs);
      // One event unacknowledged at a time, over every process: each is handled after the one before it
      // was, so the events of one resource keep their order (webhook deliveries go out in that order).
      const config = {
        durable_name: name, ack_policy: AckPolicy.Explicit, ack_wait: ackWait, deliver_policy: DeliverPolicy.All, max_deliver: -1, max_ack_pending: 1,
      };
      try {
        await jsm.consumers.add(EVENTS_STREAM, config);
      } catch {
        // There, with other settings: this process's win.
        await jsm.consumers.update(EVENTS_STREAM, name, { ack_wait: ackWait, max_ack_pending: 1 });
      }
      let stopped = false;
      let messages: ConsumerMessages | undefined;
      let current: Promise<void> = Promise.resolve();
      const handle = async (message: JsMsg) => {
        // Tells the server the handler is still at it, so a slow handler's event does not go to another process meanwhile.
        const working = setInterval(() => message.working(), options.ackWaitMs / 2);
        try {
          await handler(decode(message));
          message.ack();
        } catch (error) {
          log.error({ err: error, consumer: name, seq: message.seq, deliveries: message.info.deliveryCount }, 'an event consumer failed; the event comes again');
          message.nak(Math.min(options.ackWaitMs, RETRY_MAX_MS));
        } finally {
          clearInterval(working);
        }
      };
      const done = keepRunning(`consumer ${name}`, log, () => stopped || closed, async () => {
        messages = await (await js.consumers.get(EVENTS_STREAM, name)).consume({ max_messages: DURABLE_BATCH });
        for await (const message of messages) {
          if (stopped) break;
          current = handle(message);
          await current;
        }
      });
      const consumer = {
        async stop() {
          stopped = true;
          messages?.stop();
          await current;
          await done;
          running.delete(consumer);
        },
      };
      running.add(consumer);
      return consumer;
    },
    async close() {
      closed = true;
      await Promise.all([...running].map((r) => r.stop()));
      await nc.close();
    },
  };
}
