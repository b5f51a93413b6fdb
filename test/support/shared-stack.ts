import { inject } from 'vitest';
import { SCOPES } from '../../subgraphs/platform/auth/tokens.ts';
import { clientCalls, DEFAULT_CLIENT, startTestStack, type TestStack } from './stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Starts the names of this run's shared stacks' data folders and databases (shared-stack-setup.ts). */
    sharedStackLabel: string;
  }
}

/** The worker's stack and the subgraphs it runs. */
let shared: { subgraphs: Set<string>; stack: Promise<TestStack> } | undefined;
let files = 0;

/**
 * The stack of this test worker, started by its first file and shared by the next ones, seen from
 * organisations of the calling file's own: tenancy keeps each file's rows apart, so a file sees
 * what it would on a stack of its own. A worker's files run one after another; vitest.config.ts
 * keeps this module (and so the stack) across them, for the files of SHARED_WORKER_FOLDERS only.
 *
 * `subgraphs` are those the file needs: the stack runs at least those (a file that asks for one it
 * lacks replaces it with one running both sets, so a worker starts at most a few).
 * `token` and `client` are a new all-scopes client's, in the organisation `org` (`org-a.<n>`), and
 * `clientFor(name)` adds clients in `<name>.<n>`: `clientFor('org-a')` is the file's organisation,
 * `clientFor('org-b')` another of its own. close() checks the file's REST answers against
 * /openapi.json and leaves the stack running: it ends with the worker, and shared-stack-setup.ts
 * removes its data folder and database after the run.
 *
 * A file that counts rows across organisations, restarts the stack, changes what is shared by every
 * organisation (keys, reference data) or needs environment variables of its own uses startTestStack,
 * as test/scoring/mvr-keyring.test.ts does (it replaces the scoring keyring and re-encrypts every
 * record); test/booking/service.test.ts and test/registration/services.test.ts open their database.
 */
export async function sharedTestStack(options: { subgraphs: string[] }): Promise<TestStack> {
  const label = inject('sharedStackLabel');
  if (!label) throw new Error('sharedTestStack() serves only the files of SHARED_WORKER_FOLDERS (vitest.config.ts)');
  if (!shared || options.subgraphs.some((name) => !shared!.subgraphs.has(name))) {
    const previous = shared?.stack;
    const subgraphs = new Set([...shared?.subgraphs ?? [], ...options.subgraphs]);
    shared = { subgraphs, stack: replace(previous, () => startTestStack({ subgraphs: [...subgraphs], label })) };
  }
  const base = await shared.stack;
  const file = ++files;
  const orgOf = (name: string) => `${name}.${file}`;
  const own = await base.stack.gateway.clients.create(orgOf(DEFAULT_CLIENT.org), [...SCOPES]);
  const { calls, checkContract } = await clientCalls(() => base.url, () => base.stack, {
    id: own.clientId, secret: own.clientSecret, org: own.organisation,
  }, orgOf);
  return {
    ...calls,
    get url() { return base.url; },
    get stack() { return base.stack; },
    config: base.config,
    async restart() { throw new Error('a shared stack is not restarted: start the file\'s own (startTestStack)'); },
    async close() { checkContract(); },
  };
}

/** Closes the previous stack (the files that used it are done) before starting the next. */
async function replace(previous: Promise<TestStack> | undefined, start: () => Promise<TestStack>) {
  await (await previous?.catch(() => undefined))?.close();
  return start();
}
