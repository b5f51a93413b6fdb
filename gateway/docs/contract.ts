/**
 * Checks an OpenAPI 3.1 document and the responses of real requests against it, generically: nothing
 * here knows the paths, so every area's REST table is covered as it lands. Used by
 * test/gateway/openapi-contract.test.ts; any test making REST calls can check its responses with it.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Json = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;
const STATUS_KEY = /^([1-5]\d\d|[1-5]XX|default)$/;

export interface OpenApiOperation { method: string; path: string; operation: Json }

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `/users/{userId}` as a regular expression over a request path. */
const templateRegex = (template: string) =>
  new RegExp(`^${template.split(/(\{[^}]+\})/).map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('')}/?$`);

export class OpenApiContract {
  readonly doc: Json;
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; regex: RegExp; literalLength: number }[];

  constructor(doc: unknown) {
    if (!isObject(doc)) throw new Error('The OpenAPI document is not an object');
    this.doc = doc;
    this.ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true, validateFormats: true });
    addFormats.default(this.ajv);
    // The whole document as one schema, so `#/components/...` references resolve inside it.
    this.ajv.addSchema({ $id: 'openapi:doc', ...this.componentsOnly() });
    const paths = isObject(doc.paths) ? Object.keys(doc.paths) : [];
    // The most literal template wins (`/users/me` before `/users/{id}`).
    this.templates = paths.map((template) => ({ template, regex: templateRegex(template), literalLength: template.replace(/\{[^}]+\}/g, '').length }))
      .sort((a, b) => b.literalLength - a.literalLength);
  }

  private componentsOnly() {
    return { components: this.doc.components ?? {} };
  }

  /** Every operation of the document. */
  operations(): OpenApiOperation[] {
    const paths = isObject(this.doc.paths) ? this.doc.paths : {};
    return Object.entries(paths).flatMap(([path, item]) => (isObject(item)
      ? METHODS.filter((m) => isObject(item[m])).map((method) => ({ method, path, operation: item[method] as Json }))
      : []));
  }

  /** Follows a local `$ref` (`#/components/...`). */
  resolve(value: unknown): unknown {
    let current = value;
    for (let hops = 0; isObject(current) && typeof current.$ref === 'string' && hops < 10; hops += 1) {
      const ref = current.$ref as string;
      if (!ref.startsWith('#/')) return undefined;
      current = ref.slice(2).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), this.doc);
    }
    return current;
  }

  /** A schema compiled with `#/components/...` references pointing into the document. */
  private validator(key: string, schema: unknown): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      const rewritten = JSON.parse(JSON.stringify(schema ?? {}).replace(/"\$ref":"#\/components\//g, '"$ref":"openapi:doc#/components/')) as Json;
      validate = this.ajv.compile(rewritten);
      this.validators.set(key, validate);
    }
    return validate;
  }

  /** What makes the document an invalid OpenAPI 3.1 document (empty when it is valid). */
  structureErrors(): string[] {
    const errors: string[] = [];
    const doc = this.doc;
    if (typeof doc.openapi !== 'string' || !/^3\.1\.\d+$/.test(doc.openapi)) errors.push(`openapi must be 3.1.x, not ${String(doc.openapi)}`);
    if (!isObject(doc.info) || typeof doc.info.title !== 'string' || typeof doc.info.version !== 'string') errors.push('info needs a title and a version');
    if (!isObject(doc.paths)) return [...errors, 'paths must be an object'];
    const schemes = isObject(doc.components) && isObject(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
    const operationIds = new Map<string, string>();
    for (const path of Object.keys(doc.paths)) if (!path.startsWith('/')) errors.push(`path ${path} must start with /`);
    // Every $ref anywhere must resolve.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]);
    for (const ref of new Set(refs)) if (this.resolve({ $ref: ref }) === undefined) errors.push(`$ref ${ref} does not resolve`);

    for (const { method, path, operation } of this.operations()) {
      const at = `${method.toUpperCase()} ${path}`;
      if (typeof operation.operationId === 'string') {
        if (operationIds.has(operation.operationId)) errors.push(`${at}: operationId ${operation.operationId} also used by ${operationIds.get(operation.operationId)}`);
        operationIds.set(operation.operationId, at);
      }
      const pathItem = (doc.paths as Json)[path] as Json;
      const parameters = [...(Array.isArray(pathItem.parameters) ? pathItem.parameters : []), ...(Array.isArray(operation.parameters) ? operation.parameters : [])]
        .map((p) => this.resolve(p)).filter(isObject);
      for (const p of parameters) {
        if (typeof p.name !== 'string' || !['query', 'header', 'path', 'cookie'].includes(String(p.in))) errors.push(`${at}: parameter needs a name and in (query, header, path, cookie)`);
        if (!('schema' in p) && !('content' in p)) errors.push(`${at}: parameter ${String(p.name)} needs a schema or content`);
        if (p.in === 'path' && p.required !== true) errors.push(`${at}: path parameter ${String(p.name)} must be required`);
        if ('schema' in p) this.tryCompile(errors, `${at} parameter ${String(p.name)}`, p.schema);
      }
      for (const name of [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1])) {
        if (!parameters.some((p) => p.in === 'path' && p.name === name)) errors.push(`${at}: path parameter {${name}} is not declared`);
      }
      for (const p of parameters.filter((q) => q.in === 'path')) if (!path.includes(`{${String(p.name)}}`)) errors.push(`${at}: path parameter ${String(p.name)} is not in the path`);
      if (operation.requestBody !== undefined) {
        const body = this.resolve(operation.requestBody);
        if (!isObject(body) || !isObject(body.content) || !Object.keys(body.content).length) errors.push(`${at}: requestBody needs content`);
        else for (const [type, media] of Object.entries(body.content)) this.checkMedia(errors, `${at} request ${type}`, media);
      }
      if (!isObject(operation.responses) || !Object.keys(operation.responses).length) {
        errors.push(`${at}: responses must not be empty`);
        continue;
      }
      for (const [status, raw] of Object.entries(operation.responses)) {
        if (!STATUS_KEY.test(status)) errors.push(`${at}: response key ${status} is not a status code`);
        const response = this.resolve(raw);
        if (!isObject(response) || typeof response.description !== 'string') { errors.push(`${at} ${status}: a response needs a description`); continue; }
        if (response.content !== undefined) {
          if (!isObject(response.content)) errors.push(`${at} ${status}: content must be an object`);
          else for (const [type, media] of Object.entries(response.content)) this.checkMedia(errors, `${at} ${status} ${type}`, media);
        }
      }
      if (operation.security !== undefined) {
        if (!Array.isArray(operation.security)) errors.push(`${at}: security must be an array`);
        else for (const requirement of operation.security) for (const name of Object.keys(isObject(requirement) ? requirement : {})) if (!(name in schemes)) errors.push(`${at}: security scheme ${name} is not defined`);
      }
    }
    return errors;
  }

  private tryCompile(errors: string[], at: string, schema: unknown) {
    try {
      this.validator(`structure ${at}`, schema);
    } catch (error) {
      errors.push(`${at}: invalid JSON Schema: ${(error as Error).message}`);
    }
  }

  private checkMedia(errors: string[], at: string, media: unknown) {
    if (!isObject(media)) { errors.push(`${at}: media type must be an object`); return; }
    if (media.schema === undefined) return;
    this.tryCompile(errors, at, media.schema);
    if (media.example !== undefined && !at.includes('x-www-form-urlencoded')) {
      try {
        const validate = this.validator(`structure ${at}`, media.schema);
        if (!validate(media.example)) errors.push(`${at}: the example does not match the schema: ${this.ajv.errorsText(validate.errors)}`);
      } catch { /* reported by tryCompile */ }
    }
  }

  /** The documented operation for a request, or null. */
  find(method: string, url: string): OpenApiOperation | null {
    const path = url.split('?')[0];
    const template = this.templates.find((t) => t.regex.test(path) && isObject((this.doc.paths as Json)[t.template]) && isObject(((this.doc.paths as Json)[t.template] as Json)[method.toLowerCase()]));
    if (!template) return null;
    return { method: method.toLowerCase(), path: template.template, operation: ((this.doc.paths as Json)[template.template] as Json)[method.toLowerCase()] as Json };
  }

  /** Why a real response does not conform to the document (empty when it does). */
  check(method: string, url: string, status: number, contentType: string | null, body: unknown): string[] {
    const at = `${method.toUpperCase()} ${url.split('?')[0]} → ${status}`;
    const found = this.find(method, url);
    if (!found) return [`${at}: not documented`];
    const responses = (found.operation.responses ?? {}) as Json;
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
    if (!key) return [`${at}: status not documented for ${found.method.toUpperCase()} ${found.path} (documented: ${Object.keys(responses).join(', ')})`];
    const response = this.resolve(responses[key]) as Json;
    const content = isObject(response.content) ? response.content : undefined;
    if (!content) {
      const empty = body === undefined || body === null || body === '';
      return empty || status >= 400 ? [] : [`${at}: documented without content, got a body`];
    }
    const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
    const media = content[type] ?? content['*/*'];
    if (!isObject(media)) return [`${at}: content type ${type || '(none)'} not documented (documented: ${Object.keys(content).join(', ')})`];
    if (media.schema === undefined || !/json/.test(type)) return [];
    const validate = this.validator(`${found.method} ${found.path} ${key} ${type}`, media.schema);
    return validate(body) ? [] : [`${at}: body does not match ${found.method.toUpperCase()} ${found.path} ${key} ${type}: ${this.ajv.errorsText(validate.errors)}`];
  }
}
