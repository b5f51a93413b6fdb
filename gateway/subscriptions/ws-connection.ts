import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { ServerOptions } from 'graphql-ws';
import { makeServer } from 'graphql-ws';
import type { Counter } from 'prom-client';
import type { WebSocket } from 'ws';
import { CloseCode, closeReason, closeReasonOf, type CloseReason } from './close-codes.ts';
import { serialisedBytes } from './pre-serialised.ts';

/** graphql-ws's own closes: 4408 is its "no connection_init in time"; the others, messages it refused. */
const GRAPHQL_WS_INIT_TIMEOUT = 4408;
const INTERNAL_ERROR = 4500;

const MESSAGE_END = Buffer.from('}');

/** One WebSocket on /graphql: how it is closed, and why (the first decision, counted when it is made). */
export class Connection {
  /** The client of its token, once acknowledged. */
  clientId: string | undefined;
  /** Results handed to the socket since the client last answered a ping. */
  unread = false;
  private reason: CloseReason | undefined;
  private idle: NodeJS.Timeout | undefined;

  readonly socket: WebSocket;
  private readonly closed: Counter<'reason'>;

  constructor(socket: WebSocket, closed: Counter<'reason'>) {
    this.socket = socket;
    this.closed = closed;
  }

  /** Counts the close once, with the first reason given (the server's; else `client_closed` at the socket's close). */
  ended(reason: CloseReason) {
    if (this.reason) return;
    this.reason = reason;
    this.closed.inc({ reason });
  }

  /** Closes with `code`; `reason` labels the close in gateway_subscriptions_closed_total (by default the code's). */
  close(code: number, text: string, reason: CloseReason = closeReasonOf(code)) {
    this.ended(reason);
    this.socket.close(code, closeReason(text));
  }

  /** Ends the connection without a close frame (its peer does not answer). */
  terminate(reason: CloseReason) {
    this.ended(reason);
    this.socket.terminate();
  }

  /**
   * What writes subscription `id`'s results as graphql-ws `next` messages: the message's start, built
   * once, then the result's JSON, serialised and encoded once for every subscriber of a shared
   * execution. graphql-ws would build, check and serialise each message, and await each write, once
   * per subscriber.
   */
  sender(id: string) {
    const start = Buffer.from(`{"id":${JSON.stringify(id)},"type":"next","payload":`);
    return (result: object) => {
      this.unread = true;
      if (this.socket.readyState !== this.socket.OPEN) return;
      const payload = serialisedBytes(result);
      this.socket.send(Buffer.concat([start, payload, MESSAGE_END], start.length + payload.length + 1), { binary: false });
    };
  }

  /** A first subscription started: the connection is no longer idle. */
  subscribed() { clearTimeout(this.idle); }

  idleAfter(ms: number) {
    this.idle = setTimeout(() => this.close(CloseCode.Idle, `idle: no subscription within ${ms} ms`), ms);
  }

}

/** What graphql-ws's callbacks find in `ctx.extra`. */
export interface ConnectionExtra { socket: WebSocket; request: FastifyRequest; connection: Connection }

export interface ConnectionOptions {
  /** A ping this often; a connection with no answer by the next one is closed. */
  keepAliveMs: number;
  /** A connection that has not started a subscription within this is closed (1000). */
  idleCloseMs: number;
  /** Open connections this process holds, authenticated or not; past it 4429. */
  maxPerProcess: number;
  closed: Counter<'reason'>;
  log: FastifyBaseLogger;
}

/**
 * graphql-ws on `ws` sockets for @fastify/websocket's `wsHandler`, in place of graphql-ws's own
 * adapter (`makeHandler`), so that: a client that does not answer a ping while results sent to it are
 * unread is a slow consumer (4408), not a silent termination; every close is counted with its reason;
 * errors go to the JSON log, not to the console; connections are bounded per process and closed
 * when idle.
 */
export function graphqlWsConnections(
  serverOptions: ServerOptions<Record<string, unknown>, ConnectionExtra>,
  options: ConnectionOptions,
) {
  const server = makeServer(serverOptions);
  const open = new Set<Connection>();
  const { keepAliveMs, idleCloseMs, maxPerProcess, closed, log } = options;

  /** No answer to the last ping within keepAliveMs. */
  const unresponsive = (connection: Connection) => {
    const { clientId, socket } = connection;
    if (connection.unread || socket.bufferedAmount > 0) {
      const unsent = socket.bufferedAmount;
      log.warn({ clientId, unsent }, 'subscription connection dropped: slow consumer (no answer to a ping)');
      const why = `slow consumer: results unread and no answer to a ping within ${keepAliveMs} ms`;
      return connection.close(CloseCode.SlowConsumer, why);
    }
    log.warn({ clientId }, 'subscription connection dropped: keep-alive timeout (no answer to a ping)');
    connection.terminate('keepalive_timeout');
  };

  function handle(socket: WebSocket, request: FastifyRequest) {
    const connection = new Connection(socket, closed);
    // Refused before graphql-ws reads anything from it.
    if (open.size >= maxPerProcess) {
      const why = `Too many connections: this server holds its maximum of ${maxPerProcess}; retry on another`;
      return connection.close(CloseCode.TooManyConnections, why);
    }
    let awaitingPong = false;
    const keepAlive = setInterval(() => {
      if (!awaitingPong) {
        awaitingPong = true;
        return socket.ping();
      }
      // Judged after this turn's reads: a process that stalled (an overloaded machine) runs its timers
      // before it reads the pong that came meanwhile.
      setImmediate(() => {
        if (!awaitingPong || socket.readyState !== socket.OPEN) return;
        clearInterval(keepAlive);
        unresponsive(connection);
      });
    }, keepAliveMs);
    socket.on('pong', () => { awaitingPong = false; connection.unread = false; });
    // Logged by the plugin's errorHandler (index.ts). A frame `ws` refused (WS_ERR_*: too big, malformed) closes the
    // socket with its code; other errors are the network's (a reset), the client's close.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code?.startsWith('WS_ERR_')) connection.ended('protocol_error');
    });
    const ended = server.opened({
      protocol: socket.protocol,
      send: (message) => new Promise((resolve, reject) => {
        if (socket.readyState !== socket.OPEN) return resolve();
        socket.send(message, (error) => (error ? reject(error) : resolve()));
      }),
      close: (code = INTERNAL_ERROR, reason = '') =>
        connection.close(code, reason, code === GRAPHQL_WS_INIT_TIMEOUT ? 'idle' : 'protocol_error'),
      onMessage: (received) => socket.on('message', async (data) => {
        try {
          await received(String(data));
        } catch (error) {
          const err = { type: (error as Error).name, message: (error as Error).message };
          log.error({ clientId: connection.clientId, err }, 'a graphql-ws message failed');
          connection.close(INTERNAL_ERROR, 'Internal server error', 'protocol_error');
        }
      }),
    }, { socket, request, connection });
    socket.once('close', (code, reason) => {
      clearInterval(keepAlive);
      connection.subscribed();
      open.delete(connection);
      connection.ended('client_closed');
      void ended(code, String(reason));
    });
    open.add(connection);
    connection.idleAfter(idleCloseMs);
  }

  return {
    handle,
    /** Closes every connection (1001), acknowledged or not. */
    shutdown() {
      for (const connection of open) connection.close(CloseCode.GoingAway, 'going away: the server is shutting down');
    },
  };
}
