import type { ApolloServerPlugin } from '@apollo/server';
import { Kind, visit, type DocumentNode } from 'graphql';
import { badInput } from './errors.ts';

function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => k.includes('\u0000') || containsNul(v));
  return false;
}

/** Parsed documents are cached (Apollo's document store, the query plan's fetch nodes): each is visited once. */
const literalsWithNul = new WeakMap<DocumentNode, boolean>();

function documentContainsNul(document: DocumentNode): boolean {
  let found = literalsWithNul.get(document);
  if (found === undefined) {
    found = false;
    visit(document, { [Kind.STRING]: (node) => { if (node.value.includes('\u0000')) found = true; } });
    literalsWithNul.set(document, found);
  }
  return found;
}

/** True when a request carries a NUL character in its variables or string literals. */
export const requestContainsNul = (variables: unknown, document: DocumentNode) => containsNul(variables) || documentContainsNul(document);

/** The error a request with NUL characters gets. */
export const nulError = () => badInput('Text must not contain NUL (\\u0000) characters');

/**
 * PostgreSQL text cannot hold NUL characters; refuse them in variables and literals up front as
 * bad input (HTTP 400), rather than letting the database fail the request later.
 */
export const nulGuard: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async didResolveOperation({ request, document }) {
        if (requestContainsNul(request.variables, document)) {
          const error = nulError();
          Object.assign(error.extensions, { http: { status: 400 } });
          throw error;
        }
      },
    };
  },
};
