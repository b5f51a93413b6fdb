import type { IdeExample } from '../platform/subgraph.ts';

/**
 * The GraphQL IDE's example tabs for registration: validated against the API schema (test/gateway/ide.test.ts) and
 * typed by `npm run codegen`.
 */
export const ideExamples: readonly IdeExample[] = [
  {
    query: `# Registration (scope b2b): the product catalogue and the consents each product needs.
query RegistrationCatalogue {
  registrationProducts { name description requiredConsents subjects }
}`,
  },
  {
    query: `# A registered user with devices, products and consents (scope b2b).
query RegistrationUser($userId: ID!) {
  registeredUser(userId: $userId) {
    id userId status active
    devices { id deviceId type status }
    products { id registrationId productName status registeredAt }
  }
}`,
    variables: { userId: 'driver-001' },
  },
];
