/* global window, SwaggerUIBundle */
// Starts Swagger UI on the docs page (a served file, not inline: the page's CSP runs no inline script).

/** A random (version 4) UUID; crypto.randomUUID needs a secure context (https or localhost), getRandomValues does not. */
function newUuid() {
  if (typeof window.crypto.randomUUID === 'function') return window.crypto.randomUUID();
  const b = window.crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Each Try it out of a POST or PATCH is a new logical operation: it gets a fresh Idempotency-Key unless
 * the user typed one (to try a retry on purpose), so a second execution is neither a replay of the first
 * nor refused as a key reused for another body (422).
 */
function withIdempotencyKey(request) {
  request.curlOptions = []; // what Swagger UI's default interceptor does
  const method = String(request.method || 'GET').toUpperCase();
  if (method !== 'POST' && method !== 'PATCH') return request;
  const headers = request.headers || (request.headers = {});
  const name = Object.keys(headers).find((h) => h.toLowerCase() === 'idempotency-key');
  if (name !== undefined && String(headers[name]).trim() !== '') return request;
  if (name !== undefined) delete headers[name];
  headers['Idempotency-Key'] = newUuid();
  return request;
}

window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: false,
  validatorUrl: null,
  tryItOutEnabled: false,
  requestInterceptor: withIdempotencyKey,
});
