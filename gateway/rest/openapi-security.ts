import type { Scope } from '../../subgraphs/platform/auth/tokens.ts';
import { TOKEN_PATH } from '../auth/token-route.ts';
import { areaTokenEndpoints } from '../auth/area-token-routes.ts';

/**
 * How the OpenAPI document says which token an operation needs: an OAuth 2.0 client-credentials
 * scheme per token endpoint (`oauth2` for the platform's, one per area endpoint, e.g. the roadside
 * services'), so that Swagger UI's Authorize and generated clients fetch the token themselves from a
 * client id and secret, and `bearer` for a token obtained otherwise (pasted, or an issuer's).
 */
const PLATFORM_SCOPES: Record<Scope, string> = {
  b2b: 'Booking, pre-qualification scoring and registration',
  roadside: 'Roadside rescue',
  admin: 'Operators: the admin API (granted only when asked for)',
};

const clientCredentials = (tokenUrl: string, scopes: Record<string, string>, description: string) => ({
  type: 'oauth2', description, flows: { clientCredentials: { tokenUrl, scopes } },
});

export const securitySchemes = {
  oauth2: clientCredentials(TOKEN_PATH, PLATFORM_SCOPES, `OAuth 2.0 client credentials at POST ${TOKEN_PATH} `
    + '(client id and secret in HTTP Basic or the form); a token lives one hour. Without `scope`, a token '
    + 'carries every scope of the client but `admin`.'),
  ...Object.fromEntries(areaTokenEndpoints.map(({ path, openapi: { securityScheme } }) =>
    [securityScheme.name, clientCredentials(path, securityScheme.scopes, securityScheme.description)])),
  bearer: {
    type: 'http', scheme: 'bearer', bearerFormat: 'JWT',
    description: `A token obtained beforehand (from POST ${TOKEN_PATH}, an area's token endpoint, `
      + 'or a trusted issuer)',
  },
};

/** The alternatives that satisfy an operation's scope (`any`: any valid token): each scheme granting it. */
export function securityFor(scope: Scope | 'any'): Record<string, string[]>[] {
  const scopes = scope === 'any' ? [] : [scope];
  const areas = areaTokenEndpoints.map((e) => e.openapi.securityScheme)
    .filter((s) => scope === 'any' || scope in s.scopes).map((s) => ({ [s.name]: scopes }));
  return [{ oauth2: scopes }, ...areas, { bearer: scopes }];
}
