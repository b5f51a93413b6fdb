/**
 * The REST breaking-change checker (schema/contract/rest-diff.ts): every breaking kind is found at
 * its location, and additions or rules stated for the first time are not breaking.
 */
import { describe, expect, it } from 'vitest';
import { restBreakingChanges } from '../../schema/contract/rest-diff.ts';

type Doc = Record<string, unknown>;
/** A document as the cases below edit it: plain JSON, reached into freely. */
type Editable = Doc & { paths: Record<string, any>; components: { schemas: Record<string, any> } }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A small document: a user with a status enum, a list query and a closed create body, through a component. */
function baseline(): Doc {
  return {
    openapi: '3.1.0',
    paths: {
      '/users': {
        get: {
          parameters: [{ name: 'limit', in: 'query', required: false, schema: { type: 'integer', maximum: 100 } }],
          responses: {
            200: { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/User' } } } } },
            404: { description: 'no', content: { 'application/problem+json': { schema: {} } } },
            default: { description: 'other', content: { 'application/problem+json': { schema: {} } } },
          },
        },
        post: {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object', additionalProperties: true,
                  properties: { name: { type: ['string', 'null'], maxLength: 50, pattern: '^[a-z]+$' }, status: { type: 'string', enum: ['active', 'blocked'] }, nickname: { type: 'string' } },
                  required: ['name'],
                },
              },
            },
          },
          responses: { 201: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/User' } } } } },
        },
      },
      '/users/{id}': {
        get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/User' } } } } } },
        delete: { responses: { 204: { description: 'gone' } } },
      },
    },
    components: {
      schemas: {
        User: {
          type: 'object',
          properties: { id: { type: 'string' }, status: { type: 'string', enum: ['active', 'blocked'] }, age: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } }, manager: { $ref: '#/components/schemas/User' } },
          required: ['id', 'status'],
        },
      },
    },
  };
}

/** The baseline changed by `edit` (on a deep copy). */
function changed(edit: (doc: Editable) => void) {
  const doc = structuredClone(baseline()) as Editable;
  edit(doc);
  return restBreakingChanges(baseline(), doc).map((c) => `${c.kind} ${c.location}`);
}

describe('REST breaking changes', () => {
  it('finds none between a document and itself (its User schema is recursive)', () => {
    expect(restBreakingChanges(baseline(), baseline())).toEqual([]);
  });

  it.each([
    ['a removed path', (d: Editable) => { delete d.paths['/users/{id}']; }, ['path-removed /users/{id}']],
    ['a removed operation', (d: Editable) => { delete d.paths['/users/{id}'].delete; }, ['operation-removed DELETE /users/{id}']],
    ['a removed parameter', (d: Editable) => { d.paths['/users'].get.parameters = []; }, ['parameter-removed GET /users query:limit']],
    ['a parameter that became required', (d: Editable) => { d.paths['/users'].get.parameters[0].required = true; }, ['parameter-became-required GET /users query:limit']],
    ['a new required parameter', (d: Editable) => { d.paths['/users'].get.parameters.push({ name: 'org', in: 'header', required: true, schema: { type: 'string' } }); }, ['parameter-became-required GET /users header:org']],
    ['a request body that became required', (d: Editable) => { d.paths['/users/{id}'].delete.requestBody = { required: true, content: { 'application/json': { schema: {} } } }; }, ['request-body-became-required DELETE /users/{id}']],
    ['a removed request media type', (d: Editable) => { d.paths['/users'].post.requestBody.content = { 'text/csv': { schema: {} } }; }, ['request-media-type-removed POST /users application/json']],
    ['a removed success status', (d: Editable) => { d.paths['/users'].post.responses = { 200: d.paths['/users'].post.responses[201] }; }, ['response-status-removed POST /users 201']],
    ['a removed success media type', (d: Editable) => { d.paths['/users/{id}'].get.responses[200].content = { 'text/plain': { schema: { type: 'string' } } }; }, ['response-media-type-removed GET /users/{id} 200 application/json']],
    ['a request type narrowed', (d: Editable) => { d.paths['/users'].post.requestBody.content['application/json'].schema.properties.name.type = 'string'; }, ['request-type-narrowed POST /users request body.name']],
    ['a parameter type narrowed', (d: Editable) => { d.paths['/users'].get.parameters[0].schema.type = 'string'; }, ['request-type-narrowed GET /users query:limit']],
    ['a request enum value removed', (d: Editable) => { d.paths['/users'].post.requestBody.content['application/json'].schema.properties.status.enum = ['active']; }, ['request-enum-value-removed POST /users request body.status "blocked"']],
    ['a request property newly required', (d: Editable) => { d.paths['/users'].post.requestBody.content['application/json'].schema.required.push('status'); }, ['request-property-became-required POST /users request body.status']],
    ['a new required request property', (d: Editable) => { const s = d.paths['/users'].post.requestBody.content['application/json'].schema; s.properties.org = { type: 'string' }; s.required.push('org'); }, ['request-property-became-required POST /users request body.org']],
    ['a property removed from a request object that became closed', (d: Editable) => { const s = d.paths['/users'].post.requestBody.content['application/json'].schema; s.additionalProperties = false; delete s.properties.nickname; }, ['request-rule-changed POST /users request body additionalProperties', 'request-property-removed POST /users request body.nickname']],
    ['a request bound lowered', (d: Editable) => { d.paths['/users'].post.requestBody.content['application/json'].schema.properties.name.maxLength = 20; }, ['request-bound-narrowed POST /users request body.name maxLength']],
    ['a parameter bound lowered', (d: Editable) => { d.paths['/users'].get.parameters[0].schema.maximum = 10; }, ['request-bound-narrowed GET /users query:limit maximum']],
    ['a request pattern changed', (d: Editable) => { d.paths['/users'].post.requestBody.content['application/json'].schema.properties.name.pattern = '^[a-z]{2,}$'; }, ['request-rule-changed POST /users request body.name pattern']],
    ['a response property removed (in a component, at each use)', (d: Editable) => { delete d.components.schemas.User.properties.age; }, ['response-property-removed GET /users 200 body[].age', 'response-property-removed POST /users 201 body.age', 'response-property-removed GET /users/{id} 200 body.age']],
    ['a response property no longer required', (d: Editable) => { d.components.schemas.User.required = ['id']; }, ['response-property-became-optional GET /users 200 body[].status', 'response-property-became-optional POST /users 201 body.status', 'response-property-became-optional GET /users/{id} 200 body.status']],
    ['a response enum value removed', (d: Editable) => { d.components.schemas.User.properties.status.enum = ['active']; }, ['response-enum-value-removed GET /users 200 body[].status "blocked"', 'response-enum-value-removed POST /users 201 body.status "blocked"', 'response-enum-value-removed GET /users/{id} 200 body.status "blocked"']],
    ['a response enum dropped', (d: Editable) => { delete d.components.schemas.User.properties.status.enum; }, ['response-enum-removed GET /users 200 body[].status', 'response-enum-removed POST /users 201 body.status', 'response-enum-removed GET /users/{id} 200 body.status']],
    ['a response type widened', (d: Editable) => { d.components.schemas.User.properties.age.type = ['integer', 'string']; }, ['response-type-widened GET /users 200 body[].age', 'response-type-widened POST /users 201 body.age', 'response-type-widened GET /users/{id} 200 body.age']],
    ['a response item changed inside a nested array', (d: Editable) => { d.components.schemas.User.properties.tags.items.type = 'object'; }, ['response-type-widened GET /users 200 body[].tags[]', 'response-type-widened POST /users 201 body.tags[]', 'response-type-widened GET /users/{id} 200 body.tags[]']],
  ] as [string, (d: Editable) => void, string[]][])('finds %s', (_name, edit, expected) => {
    expect(changed(edit)).toEqual(expected);
  });

  it('reads properties through allOf and oneOf', () => {
    expect(changed((d) => {
      d.components.schemas.User = { allOf: [{ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, { oneOf: [{ properties: { status: { type: 'string', enum: ['active', 'blocked'] }, age: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } }, manager: { $ref: '#/components/schemas/User' } }, required: ['status'] }, { properties: { status: { type: 'string', enum: ['active', 'blocked'] } }, required: ['status'] }] }] };
    })).toEqual([]);
    expect(changed((d) => {
      d.components.schemas.User = { allOf: [{ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, { oneOf: [{ properties: { status: { type: 'string' }, age: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } }, manager: {} }, required: ['status'] }, { properties: {} }] }] };
    })).toEqual(expect.arrayContaining(['response-property-became-optional GET /users/{id} 200 body.status', 'response-enum-removed GET /users/{id} 200 body.status']));
  });

  it('does not count additions, first-time rules or a removed error status as breaking', () => {
    expect(changed((d) => {
      d.paths['/vehicles'] = { get: { responses: { 200: { description: 'ok' } } } };
      d.paths['/users/{id}'].put = { responses: { 200: { description: 'ok' } } };
      d.paths['/users'].get.parameters.push({ name: 'cursor', in: 'query', required: false, schema: { type: 'string' } });
      d.paths['/users'].get.parameters[0].schema.minimum = 1;
      d.paths['/users'].get.parameters[0].example = 10;
      d.paths['/users'].get.parameters[0].schema.maximum = 500;
      const body = d.paths['/users'].post.requestBody.content['application/json'];
      body.schema.properties.email = { type: 'string', format: 'email' };
      body.schema.properties.nickname.pattern = '^[a-z]+$';
      body.schema.properties.name.maxLength = 80;
      body.schema.properties.status.enum.push('pending');
      body.example = { name: 'ann' };
      d.paths['/users'].post.requestBody.content['application/x-www-form-urlencoded'] = body;
      d.paths['/users/{id}'].get.parameters[0].schema.pattern = '^[0-9a-f-]{36}$';
      d.paths['/users/{id}'].delete.requestBody = { required: false, content: { 'application/json': { schema: { type: 'object', properties: { reason: { type: 'string' } }, additionalProperties: false } } } };
      d.components.schemas.User.properties.email = { type: 'string' };
      d.components.schemas.User.properties.age.minimum = 0;
      d.components.schemas.User.properties.status.enum.push('pending');
      d.components.schemas.User.required.push('age');
      d.paths['/users'].get.responses[200].content['application/json'].example = [];
      delete d.paths['/users'].get.responses[404];
      delete d.paths['/users'].get.responses.default;
      d.paths['/users'].get.responses[400] = { description: 'bad' };
    })).toEqual([]);
  });

  it('finds an object whose properties the baseline listed (open by default) closed', () => {
    const open = baseline() as Editable;
    delete open.paths['/users'].post.requestBody.content['application/json'].schema.additionalProperties;
    const closed = structuredClone(open);
    closed.paths['/users'].post.requestBody.content['application/json'].schema.additionalProperties = false;
    expect(restBreakingChanges(open, closed).map((c) => `${c.kind} ${c.location}`)).toEqual(['request-rule-changed POST /users request body additionalProperties']);
    const unevaluated = structuredClone(closed);
    unevaluated.paths['/users'].post.requestBody.content['application/json'].schema = { ...closed.paths['/users'].post.requestBody.content['application/json'].schema, additionalProperties: undefined, unevaluatedProperties: false };
    expect(restBreakingChanges(closed, unevaluated)).toEqual([]);
  });

  it('counts the shape of a shapeless body as documentation: properties, required ones and closing it', () => {
    const doc = baseline() as Editable;
    doc.paths['/users'].post.requestBody.content['application/json'].schema = { type: 'object' };
    const stated = structuredClone(doc);
    stated.paths['/users'].post.requestBody.content['application/json'].schema = { type: 'object', additionalProperties: false, properties: { name: { type: 'string', enum: ['a'] } }, required: ['name'] };
    expect(restBreakingChanges(doc, stated)).toEqual([]);
  });
});
