import { inject } from 'vitest';
import { SCOPES } from '../../subgraphs/platform/auth/tokens.ts';
import { clientCalls, DEFAULT_CLIENT, startTestStack, type TestStack } from './stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Starts the names of the shared stacks' data folders and databases of this run (shared-stack-setup.ts). */
    sharedStackLabel: string;
  }
}

/** Every subgraph the areas' folders call (not the Risk Index, whose data costs a start and is its own tests'). */
const SHARED_SUBGRAPHS = ['booking', 'scoring', 'registration', 'roadside'];

let shared: Promise<TestStack> | undefined;
let files = 0;

/**
 * The stack of this test worker, started by its first file and shared by the next ones, seen from
 * an organisation of the calling file's own: tenancy keeps each file's rows apart, so a file sees
 * what it would on a stack of its own. A worker's files run one after another; vitest.config.ts
 * keeps this module (and so the stack) across them for the folders of SHARED_WORKER_FOLDERS only.
 *
 * `token` and `client` are a new all-scopes client's in the organisation `org` (`org-a.<n>`), and
 * `clientFor(name)` adds clients in `<name>.<n>`, so `clientFor('org-a')` is the file's own
 * organisation and `clientFor('org-b')` another one of its own. close() checks the file's REST
 * answers against /openapi.json and leaves the stack running: it ends with the worker, and
 * shared-stack-setup.ts removes its data folder and database after the run.
 *
 * A file that counts rows across organisations, restarts the stack, changes process-wide state
 * (keys, reference data) or needs its own environment variables uses startTestStack instead.
 */
export async function sharedTestStack(): Promise<TestStack> {
  const label = inject('sharedStackLabel');
  if (!label) throw new Error('sharedTestStack() serves only the files of SHARED_WORKER_FOLDERS (vitest.config.ts)');
  shared ??= startTestStack({ subgraphs: SHARED_SUBGRAPHS, label });
  const base = await shared;
  const file = ++files;
  const orgOf = (name: string) => `${name}.${file}`;
  const own = await base.stack.gateway.clients.create(orgOf(DEFAULT_CLIENT.org), [...SCOPES]);
  const calls = await clientCalls(() => base.url, () => base.stack, { id: own.clientId, secret: own.clientSecret, org: own.organisation }, orgOf);
  return {
    ...calls,
    get url() { return base.url; },
    get stack() { return base.stack; },
    config: base.config,
    async restart() { throw new Error('a shared stack is not restarted: start one of the file\'s own (startTestStack)'); },
    async close() { calls.checkContract(); },
  };
}
