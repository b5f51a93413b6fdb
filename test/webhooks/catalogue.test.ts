import { readFileSync } from 'node:fs';
import { isEnumType, parse, type EnumTypeDefinitionNode } from 'graphql';
import { expect, it } from 'vitest';
import { EVENT_SOURCES, EVENT_TYPES, LIVE_FIELDS } from '../../subgraphs/events.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { eventTypeToEnum } from '../../subgraphs/platform/webhooks/events.ts';
import { WebhookOutbox } from '../../subgraphs/platform/webhooks/outbox.ts';
import { DELIVERED_TYPES } from '../../subgraphs/webhooks/types.ts';
import { apiSchema } from '../../gateway/ide/index.ts';
import { buildOpenApi } from '../../gateway/rest/openapi.ts';
import { restRoutes } from '../../gateway/rest/index.ts';

/** The catalogue lists the areas' declarations itself (see subgraphs/events.ts): it must agree with what runs. */
it('catalogues exactly the subgraphs that keep an outbox', () => {
  const withOutbox = Object.values(subgraphDefinitions).filter((d) => d.entities.includes(WebhookOutbox)).map((d) => d.name);
  expect([...EVENT_SOURCES].sort()).toEqual(withOutbox.sort());
});

it('holds the webhooks WebhookEventType enum equal to the types the areas declare, in their order, then webhook.test', () => {
  const sdl = parse(readFileSync(new URL('../../subgraphs/webhooks/webhooks.graphql', import.meta.url), 'utf8'));
  const declared = sdl.definitions.find((d): d is EnumTypeDefinitionNode => d.kind === 'EnumTypeDefinition' && d.name.value === 'WebhookEventType');
  expect(DELIVERED_TYPES).toEqual([...EVENT_TYPES, 'webhook.test']);
  expect(declared?.values?.map((v) => v.name.value)).toEqual(DELIVERED_TYPES.map(eventTypeToEnum));
  const api = apiSchema().getType('WebhookEventType');
  expect(isEnumType(api) && api.getValues().map((v) => v.name)).toEqual(DELIVERED_TYPES.map(eventTypeToEnum));
});

it('declares only live fields the graph serves, each following declared events', () => {
  const subscription = apiSchema().getSubscriptionType();
  const query = apiSchema().getQueryType();
  expect(Object.keys(LIVE_FIELDS).sort()).toEqual(Object.keys(subscription!.getFields()).sort());
  for (const [name, field] of Object.entries(LIVE_FIELDS)) {
    expect(subscription!.getFields()[name]!.args.map((a) => a.name), name).toContain(field.argument);
    expect(query!.getFields()[field.query], `${name} runs Query.${field.query}`).toBeDefined();
    for (const type of field.events) expect(EVENT_TYPES, name).toContain(type);
  }
});

it('documents a webhook body for every type a delivery may carry, and no other', () => {
  expect(Object.keys(buildOpenApi(restRoutes).webhooks)).toEqual([...DELIVERED_TYPES]);
});
