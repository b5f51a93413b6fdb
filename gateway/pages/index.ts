/**
 * The areas' pages (SubgraphDefinition.pages), in registry order. Each gets the gateway's page helpers
 * (assets, page CSP) through a PageKit, so that no area imports the gateway.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import type { Config } from '../../subgraphs/platform/config.ts';
import type { PageKit } from '../../subgraphs/platform/page-kit.ts';
import { pageHeaders } from '../http/security-headers.ts';
import { assetSender, CSS, JS, packageFile } from '../ide/index.ts';

export const pageKit = (config: Config): PageKit => ({
  config, packageFile, assetSender, pageHeaders, contentTypes: { js: JS, css: CSS },
});

async function areaPages(app: FastifyInstance, { config }: { config: Config }) {
  const kit = pageKit(config);
  // On the root instance, as the gateway's own pages: they get the root's hooks and handlers.
  for (const { name, pages } of Object.values(subgraphDefinitions)) {
    if (pages) await app.register(fp(pages(kit), { name: `${name}-pages` }));
  }
}

/** Register on the root instance: `await app.register(areaPagesPlugin, { config })`. */
export const areaPagesPlugin = fp(areaPages, { name: 'area-pages' });
