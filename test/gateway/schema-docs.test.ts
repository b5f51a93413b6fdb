import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, isSpecifiedScalarType } from 'graphql';
import { expect, it } from 'vitest';
import { apiSchema } from '../../gateway/ide/index.ts';

/** Frontend teams read the graph through its descriptions: every type, field and enum value has one. */
it('describes every type, field and enum value of the composed API schema', () => {
  const schema = apiSchema();
  const missing: string[] = [];
  let described = 0;
  const check = (name: string, description: string | null | undefined) => {
    if (description) described += 1;
    else missing.push(name);
  };
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || isSpecifiedScalarType(type)) continue;
    check(type.name, type.description);
    if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) check(`${type.name}.${field.name}`, field.description);
    }
    if (isEnumType(type)) for (const value of type.getValues()) check(`${type.name}.${value.name}`, value.description);
  }
  expect(missing).toEqual([]);
  expect(described).toBeGreaterThan(500);
});

it('describes the root Query and Mutation as the whole graph, not one area', () => {
  const schema = apiSchema();
  for (const root of [schema.getQueryType()!, schema.getMutationType()!]) {
    for (const area of [/booking/i, /scoring/i, /roadside/i, /registration/i, /webhook/i]) expect(root.description, root.name).toMatch(area);
  }
  expect(schema.getQueryType()!.description).toMatch(/Risk Index/);
});
