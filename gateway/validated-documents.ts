import { createRequire } from 'node:module';
import type { DocumentStore } from '@apollo/server';
import type * as GraphQL from 'graphql';
import type { DocumentNode, GraphQLSchema, ValidationRule } from 'graphql';
import { LRUCache } from 'lru-cache';
import { isIntrospectionRoot } from '../subgraphs/platform/graphql-limits.ts';
import { sha256Hex } from './trusted/manifest.ts';

// The CommonJS graphql, the one Apollo Server validates with under Node (see datasources.ts).
const { BREAK, parse, printSchema, specifiedRules, validate, visit } = createRequire(import.meta.url)('graphql') as typeof GraphQL;

/** Apollo Server's default store holds this much, by its own measure (a document's JSON). */
const MAX_BYTES = 30 * 1024 * 1024;

/** What Apollo Server parses and validates a query with: the same options and rules as its own. */
export interface QueryRules {
  parseOptions: { maxTokens: number };
  validationRules: readonly ValidationRule[];
  /** Apollo Server's `introspection`: off, it refuses `__schema` and `__type` (its NoIntrospection rule). */
  introspection: boolean;
}

const asksIntrospection = (document: DocumentNode) => {
  let asks = false;
  visit(document, {
    Field(node) {
      if (!isIntrospectionRoot(node.name.value)) return undefined;
      asks = true;
      return BREAK;
    },
  });
  return asks;
};

/**
 * Apollo Server's store of parsed and validated queries (its `documentStore`), which the gateway can
 * also fill ahead of a query's first request: a subscription's query is parsed and validated when the
 * subscription starts, not on its first event, where it would hold the event loop every tenant shares.
 * Apollo Server reads a query under its schema's hash and the query's (ApolloServer's
 * generateSchemaDerivedData and requestPipeline), and stores a query there only once it passed.
 */
export class ValidatedDocuments implements DocumentStore {
  private readonly cache = new LRUCache<string, DocumentNode>({
    maxSize: MAX_BYTES, sizeCalculation: (document) => Buffer.byteLength(JSON.stringify(document)) || 1,
  });
  private readonly rules: QueryRules;
  private schema?: { value: GraphQLSchema; prefix: string };

  constructor(rules: QueryRules) {
    this.rules = rules;
  }

  async get(key: string) { return this.cache.get(key); }
  async set(key: string, document: DocumentNode) { this.cache.set(key, document); }
  async delete(key: string) { return this.cache.delete(key); }

  /** The API schema Apollo Server runs, on each load (the gateway's onSchemaLoadOrUpdate). */
  schemaLoaded(schema: GraphQLSchema) {
    this.schema = { value: schema, prefix: `${sha256Hex(printSchema(schema))}:` };
  }

  /**
   * Parses and validates `query` into the store, unless it is there, and returns its document; one
   * that fails stays out (undefined), for its request to answer.
   */
  prepare(query: string): DocumentNode | undefined {
    if (!this.schema) return undefined;
    const { value: schema, prefix } = this.schema;
    const key = prefix + sha256Hex(query);
    const stored = this.cache.get(key);
    if (stored) return stored;
    let document: DocumentNode;
    try {
      document = parse(query, this.rules.parseOptions);
    } catch {
      return undefined;
    }
    if (!this.rules.introspection && asksIntrospection(document)) return undefined;
    if (validate(schema, document, [...specifiedRules, ...this.rules.validationRules]).length) return undefined;
    this.cache.set(key, document);
    return document;
  }
}
