import { randomUUID } from 'node:crypto';

/** How long a reserved stream waits to be opened before it is dropped. */
export const RESERVATION_UNOPENED_MS = 30_000;

interface Reservation {
  clientId: string;
  /** Until the stream opens: when the reservation is dropped, and the timer dropping it. */
  expiresAt?: number;
  timer?: NodeJS.Timeout;
}

/**
 * graphql-sse's single-connection reservations (`PUT /graphql/stream`), kept here and handed to
 * graphql-sse only when their stream opens: graphql-sse keeps a reservation until its stream closes,
 * and one never opened forever. Each belongs to the client that made it, a client holds at most
 * `maxPerClient` (opened or not), and one not opened within `unopenedMs` is dropped. Per process, as
 * graphql-sse's streams are.
 */
export class StreamReservations {
  private readonly tokens = new Map<string, Reservation>();
  private readonly byClient = new Map<string, Set<string>>();
  private readonly maxPerClient: number;
  private readonly unopenedMs: number;

  constructor(maxPerClient: number, unopenedMs = RESERVATION_UNOPENED_MS) {
    this.maxPerClient = maxPerClient;
    this.unopenedMs = unopenedMs;
  }

  /** A new reservation's token, or (the client at its maximum) the seconds until one of its reservations may end. */
  reserve(clientId: string): { token: string } | { retryAfter: number } {
    const held = this.byClient.get(clientId) ?? new Set<string>();
    if (held.size >= this.maxPerClient) return { retryAfter: this.retryAfter(held) };
    const token = randomUUID();
    const timer = setTimeout(() => this.end(token), this.unopenedMs);
    timer.unref();
    this.tokens.set(token, { clientId, expiresAt: Date.now() + this.unopenedMs, timer });
    this.byClient.set(clientId, held.add(token));
    return { token };
  }

  ownerOf(token: string): string | undefined { return this.tokens.get(token)?.clientId; }

  isOpen(token: string): boolean {
    const reservation = this.tokens.get(token);
    return reservation !== undefined && reservation.timer === undefined;
  }

  /** Its stream opened: the reservation stays until `end` (the stream closes). */
  opened(token: string) {
    const reservation = this.tokens.get(token);
    if (!reservation) return;
    clearTimeout(reservation.timer);
    delete reservation.timer;
    delete reservation.expiresAt;
  }

  end(token: string) {
    const reservation = this.tokens.get(token);
    if (!reservation) return;
    clearTimeout(reservation.timer);
    this.tokens.delete(token);
    const held = this.byClient.get(reservation.clientId);
    if (held?.delete(token) && !held.size) this.byClient.delete(reservation.clientId);
  }

  close() { for (const token of [...this.tokens.keys()]) this.end(token); }

  /** Until the client's first unopened reservation expires; with every one opened, the time one would wait. */
  private retryAfter(held: Set<string>) {
    const expiries = [...held].map((token) => this.tokens.get(token)?.expiresAt).filter((at) => at !== undefined);
    const wait = expiries.length ? Math.min(...expiries) - Date.now() : this.unopenedMs;
    return Math.max(1, Math.ceil(wait / 1000));
  }
}
