import { defineEntity, p } from '@mikro-orm/core';

/**
 * A sandbox organisation, `<live>-sandbox`, made on its first sandbox client and linked to its live
 * organisation (docs/sandbox.md). Not tenant-filtered: like a client, it is how a caller's
 * organisation is found. Its own name is a tenant like any other, so tenancy keeps its rows apart.
 */
export const SandboxOrganisationSchema = defineEntity({
  name: 'SandboxOrganisation',
  tableName: 'sandbox_organisations',
  properties: {
    organisation: p.string().length(128).primary(),
    liveOrganisation: p.string().length(128).unique(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export class SandboxOrganisation extends SandboxOrganisationSchema.class {}
SandboxOrganisationSchema.setClass(SandboxOrganisation);

export const SANDBOX_SUFFIX = '-sandbox';

/** The sandbox organisation of a live one. */
export const sandboxOrganisationOf = (live: string) => `${live}${SANDBOX_SUFFIX}`;
