import type { BreakingChange } from './change.ts';
import { compareSchemas, type SchemaDiff } from './schema-diff.ts';
import { deref, type Node } from './schema-view.ts';

/**
 * The breaking changes from a baseline OpenAPI 3.1 document to the current one: a removed path,
 * operation, parameter, request media type, success status or success media type; a new or newly
 * required parameter or request body; and, in schemas, what schema-diff.ts finds. Removing an
 * error status (or `default`) is not breaking: the server's answers are unchanged, the document
 * just stops listing a status the operation cannot answer.
 */
const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const record = (value: unknown): Node => (typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Node : {});
const success = (status: string) => /^[23]/.test(status);

function parameters(doc: Node, pathItem: Node, operation: Node) {
  const all = [pathItem.parameters, operation.parameters].flatMap((list) => (Array.isArray(list) ? list.map((p) => deref(doc, p)) : []));
  return new Map(all.map((p) => [`${String(p.in)}:${String(p.name)}`, p]));
}

function compareOperation(diff: SchemaDiff, where: string, base: { item: Node; op: Node }, current: { item: Node; op: Node }) {
  const add = (kind: string, location: string, message: string) => diff.out.push({ kind, location, message });
  const [was, is] = [parameters(diff.base, base.item, base.op), parameters(diff.current, current.item, current.op)];
  for (const [key, parameter] of was) {
    const next = is.get(key);
    if (!next) add('parameter-removed', `${where} ${key}`, 'a request with it may be refused');
    else {
      if (next.required === true && parameter.required !== true) add('parameter-became-required', `${where} ${key}`, 'a request without it is refused');
      compareSchemas(diff, 'request', parameter.schema, next.schema, `${where} ${key}`);
    }
  }
  for (const [key, parameter] of is) if (!was.has(key) && parameter.required === true) add('parameter-became-required', `${where} ${key}`, 'a new required parameter');

  const [bodyWas, bodyIs] = [deref(diff.base, base.op.requestBody), deref(diff.current, current.op.requestBody)];
  if (bodyIs.required === true && bodyWas.required !== true) add('request-body-became-required', where, 'a request without a body is refused');
  const [typesWas, typesIs] = [record(bodyWas.content), record(bodyIs.content)];
  for (const [type, media] of Object.entries(typesWas)) {
    if (!(type in typesIs)) add('request-media-type-removed', `${where} ${type}`, 'a body of this type is refused');
    else compareSchemas(diff, 'request', record(media).schema, record(typesIs[type]).schema, `${where} request body`);
  }

  const [responsesWas, responsesIs] = [record(base.op.responses), record(current.op.responses)];
  for (const [status, answer] of Object.entries(responsesWas)) {
    const next = responsesIs[status];
    if (!next) {
      if (success(status)) add('response-status-removed', `${where} ${status}`, 'no longer answered');
      continue;
    }
    const [mediaWas, mediaIs] = [record(deref(diff.base, answer).content), record(deref(diff.current, next).content)];
    for (const [type, media] of Object.entries(mediaWas)) {
      if (!(type in mediaIs)) {
        if (success(status)) add('response-media-type-removed', `${where} ${status} ${type}`, 'no longer answered');
      } else compareSchemas(diff, 'response', record(media).schema, record(mediaIs[type]).schema, `${where} ${status} body`);
    }
  }
}

export function restBreakingChanges(base: Node, current: Node): BreakingChange[] {
  const diff: SchemaDiff = { base, current, out: [] };
  const [pathsWas, pathsIs] = [record(base.paths), record(current.paths)];
  for (const [path, itemWas] of Object.entries(pathsWas)) {
    if (!(path in pathsIs)) {
      diff.out.push({ kind: 'path-removed', location: path, message: 'every operation of the path is gone' });
      continue;
    }
    const [item, itemIs] = [deref(base, itemWas), deref(current, pathsIs[path])];
    for (const method of methods.filter((m) => m in item)) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!(method in itemIs)) diff.out.push({ kind: 'operation-removed', location: where, message: 'no longer served' });
      else compareOperation(diff, where, { item, op: record(item[method]) }, { item: itemIs, op: record(itemIs[method]) });
    }
  }
  const unique = new Map(diff.out.map((change) => [`${change.kind} ${change.location}`, change]));
  return [...unique.values()];
}
