import { expect } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Received } from './receiver.ts';

type Document = {
  webhooks: Record<
    string,
    { post: { requestBody: { content: { 'application/json': { schema: object } } } } }
  >;
  components: object;
};

/**
 * Validates webhook bodies against the OpenAPI document's `webhooks` section (JSON Schema 2020-12, Ajv's
 * 2020 class): the schema of the body's own type, its `$ref`s resolved in the document's components.
 */
export function payloadChecker(document: Document) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const validators = new Map(
    Object.entries(document.webhooks).map(([type, item]) => [
      type,
      ajv.compile({
        ...item.post.requestBody.content['application/json'].schema,
        components: document.components,
      }),
    ]),
  );
  /** Why `hit` breaks its documented schema, or null when it keeps to it. */
  return (hit: Received): string | null => {
    const type = String(hit.json.type);
    const validate = validators.get(type);
    if (!validate) return `no webhooks entry for ${type}`;
    return validate(hit.json) ? null : `${type}: ${ajv.errorsText(validate.errors)}`;
  };
}

/**
 * Fetches the served /openapi.json and expects every body `received` to keep to its type's schema, and
 * each of `types` to be among them (so that a file checks the types it is known to produce).
 */
export async function expectDocumentedPayloads(
  t: { request: (method: string, path: string) => Promise<{ body: unknown }> },
  received: readonly Received[],
  types: readonly string[],
) {
  const check = payloadChecker((await t.request('GET', '/openapi.json')).body as Document);
  expect(received.map(check).filter(Boolean)).toEqual([]);
  expect([...new Set(received.map((r) => r.json.type as string))]).toEqual(
    expect.arrayContaining([...types]),
  );
}
