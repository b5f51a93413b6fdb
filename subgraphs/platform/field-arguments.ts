import { createRequire } from 'node:module';
import type { GraphQLField, FieldNode } from 'graphql';

type ArgumentValues = (def: GraphQLField<unknown, unknown>, node: FieldNode, variables?: Record<string, unknown>) => Record<string, unknown>;

/**
 * graphql-js builds every field's arguments through two null-prototype objects (V8 makes them
 * dictionaries) and a copy, even for a field that takes none: half of what it allocates per field
 * of a list's objects (1,291 bytes, 615 without; test/platform/field-arguments.test.ts), and a
 * third of the gateway's allocations in the hostile scenario of `npm run bench:subscriptions`. A
 * field without arguments now gets an empty object. The executor looks the function up on its
 * module at each field, so replacing it there is enough.
 */
const values = createRequire(import.meta.url)('graphql/execution/values.js') as { getArgumentValues: ArgumentValues };
const coerce = values.getArgumentValues;
values.getArgumentValues = (def, node, variables) => (def.args.length === 0 ? {} : coerce(def, node, variables));
