import type { IncomingHttpHeaders } from 'node:http';

/** Apollo Client's client awareness: the headers a browser app names itself with. */
export const CLIENT_NAME_HEADER = 'apollographql-client-name';
export const CLIENT_VERSION_HEADER = 'apollographql-client-version';
const VALUE = /^[A-Za-z0-9._-]{1,64}$/;

/** The app a request says it comes from, each value only when it is at most 64 characters of `[A-Za-z0-9._-]`. */
export interface ClientApp { name?: string; version?: string }

const valid = (value: string | string[] | undefined) => (typeof value === 'string' && VALUE.test(value) ? value : undefined);

export function clientAppOf(headers: IncomingHttpHeaders): ClientApp {
  const name = valid(headers[CLIENT_NAME_HEADER]);
  const version = valid(headers[CLIENT_VERSION_HEADER]);
  return { ...(name ? { name } : {}), ...(version ? { version } : {}) };
}

/** The span attributes of the OpenTelemetry GraphQL conventions for it. */
export function clientAppAttributes(headers: IncomingHttpHeaders): Record<string, string> {
  const { name, version } = clientAppOf(headers);
  return { ...(name ? { 'graphql.client.name': name } : {}), ...(version ? { 'graphql.client.version': version } : {}) };
}
