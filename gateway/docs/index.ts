/**
 * `GET /docs`: the REST paths' documentation, rendered by Swagger UI from /openapi.json. Swagger UI
 * comes from the swagger-ui-dist package in node_modules (no CDN: works offline).
 */
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { assetSender, CSS, JS, packageFile, type Asset } from '../ide/index.ts';
import { pageHeaders } from '../http/security-headers.ts';

export const DOCS_PATH = '/docs';
const ASSET_PREFIX = `${DOCS_PATH}/assets/`;

const ASSETS: Record<string, Asset> = {
  'swagger-ui-bundle.js': { path: packageFile('swagger-ui-dist', 'swagger-ui-bundle.js'), type: JS },
  'swagger-ui.css': { path: packageFile('swagger-ui-dist', 'swagger-ui.css'), type: CSS },
  'favicon-32x32.png': { path: packageFile('swagger-ui-dist', 'favicon-32x32.png'), type: 'image/png' },
  'docs.js': { path: fileURLToPath(new URL('./page/docs.js', import.meta.url)), type: JS },
};

/** Swagger UI's files, its fetches of /openapi.json and Try it out's requests: this origin; its icons: data: SVG images. */
const DOCS_HEADERS = pageHeaders({ 'img-src': ["'self'", 'data:'] });

const DOCS_PAGE = `<!doctype html>
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
<script src="${ASSET_PREFIX}docs.js"></script>
</body>
</html>
`;

async function docs(app: FastifyInstance) {
  const send = assetSender();
  app.get(DOCS_PATH, { config: { securityHeaders: DOCS_HEADERS } }, async (_request, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(DOCS_PAGE));
  app.get<{ Params: { file: string } }>(`${ASSET_PREFIX}:file`, async (request, reply) => {
    const asset = ASSETS[request.params.file];
    if (!asset) return reply.callNotFound();
    return send(request, reply, asset);
  });
}

/** Register on the root instance: `await app.register(docsPlugin)`. */
export const docsPlugin = fp(docs, { name: 'rest-docs' });
