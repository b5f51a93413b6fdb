/**
 * `GET /docs`: the REST paths' documentation, rendered by Swagger UI from /openapi.json. Swagger UI
 * comes from the swagger-ui-dist package in node_modules (no CDN: works offline).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { assetSender } from '../ide/index.ts';

export const DOCS_PATH = '/docs';
const ASSET_PREFIX = `${DOCS_PATH}/assets/`;

const ASSETS: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

export const docsPage = (specUrl = '/openapi.json') => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>REST API · Fleet risk graph</title>
<link rel="stylesheet" href="${ASSET_PREFIX}swagger-ui.css">
<link rel="icon" type="image/png" href="${ASSET_PREFIX}favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${ASSET_PREFIX}swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(specUrl)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: false,
  validatorUrl: null,
  tryItOutEnabled: false,
});
</script>
</body>
</html>
`;

async function docs(app: FastifyInstance) {
  const page = docsPage();
  const send = assetSender();
  app.get(DOCS_PATH, async (_request, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page));
  app.get<{ Params: { file: string } }>(`${ASSET_PREFIX}:file`, async (request, reply) => {
    const type = ASSETS[request.params.file];
    if (!type) return reply.callNotFound();
    return send(request, reply, 'swagger-ui-dist', request.params.file, type);
  });
}

/** Register on the root instance: `await app.register(docsPlugin)`. */
export const docsPlugin = fp(docs, { name: 'rest-docs' });
