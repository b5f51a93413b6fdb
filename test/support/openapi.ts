/**
 * Checks real REST answers against an OpenAPI 3.1 document with openapi-backend (routing, response
 * bodies and headers, on draft 2020-12 Ajv) and the document itself with @seriousme/openapi-schema-validator
 * (the official 3.1 schema). What the libraries leave to the caller is here: the status must be one the
 * operation lists (no fallback), the media type one it declares, a body only where content is declared.
 */
import { OpenAPIBackend, type Document, type Operation } from 'openapi-backend';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type Options } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');
/**
 * A deep copy that shares nothing: openapi-backend turns a value met twice in one schema into a `$ref`,
 * which breaks on a shared array (an enum or a type list reused by several properties).
 */
const unshared = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/**
 * The document with every object schema in a response (or a component) that does not say whether it is
 * open made closed (`unevaluatedProperties: false`, which sees through allOf/anyOf/oneOf), so a field the
 * document does not state fails. The published document stays open: adding a field must not break partners.
 */
export function closedForResponses(doc: Json): Json {
  const close = (schema: unknown, inComposition: boolean): unknown => {
    if (Array.isArray(schema)) return schema.map((s) => close(s, inComposition));
    if (!isObject(schema)) return schema;
    const out: Json = {};
    for (const [key, value] of Object.entries(schema)) {
      const composes = key === 'allOf' || key === 'anyOf' || key === 'oneOf';
      out[key] = key === 'properties' || key === '$defs' || key === 'patternProperties'
        ? Object.fromEntries(Object.entries(value as Json).map(([name, s]) => [name, close(s, false)]))
        : key === 'example' || key === 'examples' || key === 'enum' || key === 'const' || key === 'default' ? value : close(value, composes);
    }
    const objectLike = out.type === 'object' || (Array.isArray(out.type) && out.type.includes('object')) || isObject(out.properties);
    if (objectLike && !inComposition && !('additionalProperties' in out) && !('unevaluatedProperties' in out)) out.unevaluatedProperties = false;
    return out;
  };
  const copy = unshared(doc) as { paths?: Record<string, Record<string, Json>>; components?: { schemas?: Json } };
  if (copy.components?.schemas) copy.components.schemas = Object.fromEntries(Object.entries(copy.components.schemas).map(([name, s]) => [name, close(s, false)]));
  for (const item of Object.values(copy.paths ?? {})) {
    for (const operation of Object.values(item)) {
      if (!isObject(operation) || !isObject(operation.responses)) continue;
      for (const response of Object.values(operation.responses)) {
        if (!isObject(response) || !isObject(response.content)) continue;
        for (const media of Object.values(response.content)) if (isObject(media) && media.schema !== undefined) media.schema = close(media.schema, false);
      }
    }
  }
  return copy;
}

/**
 * openapi-backend validates the `application/json` content of a response only: the validator's copy of the
 * document states each response's JSON content there (problem+json included; several JSON types as anyOf).
 */
function jsonContentAsApplicationJson(doc: Json): Json {
  const copy = unshared(doc) as { paths?: Record<string, Record<string, Json>> };
  for (const item of Object.values(copy.paths ?? {})) {
    for (const operation of Object.values(item)) {
      if (!isObject(operation) || !isObject(operation.responses)) continue;
      for (const response of Object.values(operation.responses)) {
        if (!isObject(response) || !isObject(response.content)) continue;
        const schemas = Object.entries(response.content).filter(([type, media]) => isJson(type) && isObject(media) && media.schema !== undefined)
          .map(([, media]) => (media as Json).schema);
        if (schemas.length) response.content = { 'application/json': { schema: schemas.length === 1 ? schemas[0] : { anyOf: schemas } } };
      }
    }
  }
  return copy;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

export interface DocumentedOperation { method: string; path: string; operation: Json }

/** Every operation of a document. */
export function operationsOf(doc: Json): DocumentedOperation[] {
  const paths = isObject(doc.paths) ? doc.paths : {};
  return Object.entries(paths).flatMap(([path, item]) => (isObject(item)
    ? METHODS.filter((m) => isObject(item[m])).map((method) => ({ method, path, operation: item[method] as Json }))
    : []));
}

/** Follows a local `$ref` (`#/components/...`) in a document. */
export function resolveIn(doc: Json, value: unknown): Json | undefined {
  let current = value;
  for (let hops = 0; isObject(current) && typeof current.$ref === 'string' && hops < 10; hops += 1) {
    current = current.$ref.slice(2).split('/').reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), doc);
  }
  return isObject(current) ? current : undefined;
}
export interface Answer { status: number; headers: Headers; body: unknown }

export class OpenApiContract {
  readonly doc: Json;
  private readonly api: OpenAPIBackend;

  private constructor(doc: Json, api: OpenAPIBackend) {
    this.doc = doc;
    this.api = api;
  }

  /** `strict` closes the response schemas (see closedForResponses). */
  static async of(doc: Json, options: { strict?: boolean } = {}): Promise<OpenApiContract> {
    const checked = jsonContentAsApplicationJson(options.strict ? closedForResponses(doc) : doc);
    const api = new OpenAPIBackend({
      definition: checked as unknown as Document,
      // quick: the document is checked against the OpenAPI 3.1 schema by documentErrors(), not the library's 3.0 one
      quick: true,
      strict: true,
      customizeAjv: (_ajv, ajvOptions) => {
        const ajv = new Ajv2020({ ...(ajvOptions as Options), strict: false, allErrors: true, allowUnionTypes: true });
        addFormats.default(ajv);
        return ajv as never;
      },
    });
    await api.init();
    return new OpenApiContract(doc, api);
  }

  /** Why the document is not a valid OpenAPI 3.1 document (empty when it is). */
  static async documentErrors(doc: Json): Promise<string[]> {
    const result = await new Validator().validate(doc);
    if (result.valid) return [];
    return typeof result.errors === 'string' ? [result.errors] : (result.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
  }

  /** Every operation of the document. */
  operations(): DocumentedOperation[] {
    return operationsOf(this.doc);
  }

  /** The documented operation a request reaches, or undefined. */
  find(method: string, url: string): Operation | undefined {
    const [path, search] = url.split('?');
    return this.api.router.matchOperation({ method, path, query: search ?? '', headers: {} });
  }

  /** Why a real answer does not conform to the document (empty when it does). */
  check(method: string, url: string, answer: Answer): string[] {
    const at = `${method.toUpperCase()} ${url.split('?')[0]} → ${answer.status}`;
    const operation = this.find(method, url);
    if (!operation) return [`${at}: not documented`];
    const where = `${operation.method.toUpperCase()} ${operation.path}`;
    // The document as written (the library's copy states JSON content as application/json only).
    const responses = ((this.doc.paths as Record<string, Record<string, Json>>)[operation.path][operation.method].responses ?? {}) as Record<string, Json>;
    const response = resolveIn(this.doc, responses[String(answer.status)]);
    if (!response) return [`${at}: status not listed by ${where} (listed: ${Object.keys(responses).join(', ')})`];
    const problems: string[] = [];
    const headers = Object.fromEntries(answer.headers.entries());
    const declared = isObject(response.headers) ? response.headers : {};
    for (const [name, header] of Object.entries(declared)) {
      if (isObject(header) && header.required === true && headers[name.toLowerCase()] === undefined) problems.push(`${at}: header ${name} missing`);
    }
    const headerResult = this.api.validator.validateResponseHeaders(headers, operation, { statusCode: answer.status });
    if (!headerResult.valid) problems.push(`${at}: headers do not match ${where}: ${JSON.stringify(headerResult.errors)}`);
    const content = isObject(response.content) ? response.content : undefined;
    const empty = answer.body === undefined || answer.body === null || answer.body === '';
    if (!content) return empty ? problems : [...problems, `${at}: ${where} declares no content, got a body`];
    const type = (answer.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (!(type in content)) return [...problems, `${at}: content type ${type || '(none)'} not declared by ${where} (declared: ${Object.keys(content).join(', ')})`];
    if (!isJson(type)) return problems;
    const result = this.api.validator.validateResponse(answer.body, operation, answer.status);
    if (!result.valid) problems.push(`${at}: body does not match ${where} ${answer.status}: ${(result.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}${e.params && 'unevaluatedProperty' in e.params ? ` (${String(e.params.unevaluatedProperty)})` : ''}`).join('; ')}`);
    return problems;
  }

  /** Why a value does not match what an operation documents for a status (an example, say). */
  checkBody(operationId: string, status: number, body: unknown): string[] {
    const result = this.api.validator.validateResponse(body, operationId, status);
    return result.valid ? [] : (result.errors ?? []).map((e) => `${operationId} ${status}: ${e.instancePath} ${e.message ?? ''}`);
  }
}
