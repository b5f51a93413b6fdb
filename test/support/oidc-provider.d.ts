/** The part of oidc-provider's API the sign-in test uses (the package ships no types). */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface Account { accountId: string; claims(): Record<string, unknown> }
  export interface Configuration {
    clients?: Record<string, unknown>[];
    findAccount?: (ctx: unknown, id: string) => Account | Promise<Account>;
    clientBasedCORS?: (ctx: unknown, origin: string, client: unknown) => boolean;
    ttl?: Record<string, number>;
    features?: Record<string, unknown>;
    jwks?: { keys: Record<string, unknown>[] };
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
