import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from './config.ts';
import type { RouteHeaders } from './rest/types.ts';

/** A file a page loads: its path on disk and content type. */
export interface PageAsset { path: string; type: string }

/** CSP directives a page adds to (or replaces in) the gateway's page default. */
export type PageDirectives = Record<string, string[]>;

/**
 * What the gateway hands an area's pages (SubgraphDefinition.pages), so that the area imports nothing
 * from the gateway.
 */
export interface PageKit {
  config: Config;
  /** A file inside an installed package. */
  packageFile: (pkg: string, file: string) => string;
  /** A new sender of files, each read once and gzipped once when the client accepts it. */
  assetSender: () => (request: FastifyRequest, reply: FastifyReply, asset: PageAsset) => FastifyReply;
  /** The route headers of an HTML page: the gateway's page CSP with `directives` added. */
  pageHeaders: (directives?: PageDirectives) => RouteHeaders;
  contentTypes: { js: string; css: string };
}
