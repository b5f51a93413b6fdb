import type { IdeExample } from '../platform/subgraph.ts';

/**
 * The GraphQL IDE's example tabs for pre-qualification scoring: validated against the API schema (test/gateway/ide.test.ts) and
 * typed by `npm run codegen`.
 */
export const ideExamples: readonly IdeExample[] = [
  {
    query: `# Pre-qualification user (scope b2b). Paste a token in the Headers tab below.
query ScoringUser($userId: ID!) {
  user(userId: $userId) {
    id
    userId
    homeZip
    enrollmentStatus
    createdAt
  }
}`,
    variables: { userId: 'driver-001' },
  },
  {
    query: `# Create a pre-qualification user (scope b2b); the id is generated when omitted.
mutation ScoringCreateUser($input: CreateUserInput) {
  createUser(input: $input) {
    id
    userId
    enrollmentStatus
  }
}`,
    variables: { input: { userId: 'driver-001', dateOfBirth: '1988-02-11', homeZip: '60601' } },
  },
];
