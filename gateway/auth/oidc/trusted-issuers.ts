import { AppError } from '../../../subgraphs/platform/errors.ts';
import type { IssuerRegistration } from '../issuers.ts';

/**
 * How long this process trusts its copy of the issuer registrations before reading them again: with
 * the time a read takes, the bound (2 s) between a distrust on any process and the refusal here of
 * every token of that registration.
 */
export const ISSUERS_REFRESH_MS = 1_000;

export interface IssuerSnapshot {
  byIssuer: ReadonlyMap<string, readonly IssuerRegistration[]>;
  byId: ReadonlyMap<string, IssuerRegistration>;
}

/** The registrations as the database holds them, read at most once per ISSUERS_REFRESH_MS, one read at a time. */
export class TrustedIssuers {
  private readonly load: () => Promise<IssuerRegistration[]>;
  private snapshot: (IssuerSnapshot & { at: number }) | null = null;
  private pending: Promise<IssuerSnapshot> | null = null;

  constructor(load: () => Promise<IssuerRegistration[]>) { this.load = load; }

  async current(): Promise<IssuerSnapshot> {
    if (this.snapshot && Date.now() - this.snapshot.at < ISSUERS_REFRESH_MS) return this.snapshot;
    this.pending ??= this.load().then((rows) => {
      const byIssuer = new Map<string, IssuerRegistration[]>();
      for (const row of rows) byIssuer.set(row.issuer, [...(byIssuer.get(row.issuer) ?? []), row]);
      this.snapshot = { byIssuer, byId: new Map(rows.map((row) => [row.id, row])), at: Date.now() };
      return this.snapshot;
    }, () => {
      throw new AppError('SERVICE_UNAVAILABLE', 'The access token cannot be checked now: the database is unavailable');
    }).finally(() => { this.pending = null; });
    return this.pending;
  }

  /** Reads the database on the next use (after this process changed a registration). */
  forget() { this.snapshot = null; }
}
