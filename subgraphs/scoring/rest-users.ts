import { badInput, notFound } from '../platform/errors.ts';
import { closedBody, defined, objectBody, pick } from '../platform/rest/body.ts';
import type { RestRequest, RestRoute } from '../platform/rest/types.ts';

export const SMI_PREFIX = '/shared-mobility-insights/v2';

const USER_FIELDS = 'userId userID dateOfBirth homeZip enrollmentStatus createdAt updatedAt';

export const userSchema = {
  type: 'object',
  properties: {
    userId: { type: 'string' }, userID: { type: 'string', description: 'Same as userId (booking spelling)' },
    dateOfBirth: { type: ['string', 'null'], format: 'date' }, homeZip: { type: ['string', 'null'], pattern: '^\\d{5}(-\\d{4})?$' },
    enrollmentStatus: { type: 'string', enum: ['accepted', 'pending', 'rejected'] },
    createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' },
  },
  required: ['userId', 'userID', 'enrollmentStatus'],
};

const userInputSchema = closedBody({
  type: 'object',
  properties: {
    userId: { type: ['string', 'null'], description: 'Optional; generated when omitted or null' },
    dateOfBirth: { type: ['string', 'null'], format: 'date' },
    homeZip: { type: ['string', 'null'], pattern: '^\\d{5}(-\\d{4})?$' },
  },
}, { userID: 'userId' });


/** The user resource as REST returns it: both id spellings, enrollment status in lower case. */
export function restUser(user: unknown, userId?: string): Record<string, unknown> {
  if (!user) throw notFound('User', userId ?? '');
  const u = user as Record<string, unknown>;
  return { ...u, enrollmentStatus: String(u.enrollmentStatus).toLowerCase() };
}

/** The body's id (`userID` or `userId`), the path's id, or none; a body id that contradicts the path is a 400. */
function createInput(req: RestRequest) {
  const body = objectBody(req);
  const bodyId = pick(body, 'userId', 'userID');
  const pathId = req.params.userId;
  if (pathId !== undefined && bodyId != null && bodyId !== pathId) throw badInput('The userId in the body differs from the one in the path', 'userId');
  return defined({ userId: pathId ?? bodyId, dateOfBirth: body.dateOfBirth, homeZip: body.homeZip });
}

function updateInput(req: RestRequest) {
  const body = objectBody(req);
  const bodyId = pick(body, 'userId', 'userID');
  if (bodyId != null && bodyId !== req.params.userId) throw badInput('The userId of a user cannot change', 'userId');
  return defined({ dateOfBirth: body.dateOfBirth, homeZip: body.homeZip });
}

const createUser = `mutation CreateUser($input: CreateUserInput) { createUser(input: $input) { ${USER_FIELDS} } }`;
const updateUser = `mutation UpdateUser($userId: ID!, $input: UpdateUserInput!, $mode: UpdateMode) { updateUser(userId: $userId, input: $input, mode: $mode) { ${USER_FIELDS} } }`;

const userDocs = { requestBody: userInputSchema, requestExample: { userID: 'driver-001', dateOfBirth: '1988-02-11', homeZip: '60601' }, response: userSchema };

export const userRoutes: RestRoute[] = [
  {
    method: 'POST', path: `${SMI_PREFIX}/users`, operationId: 'createUser', summary: 'Create a user (id generated when omitted or null)',
    tag: 'Users', scope: 'b2b', status: 201, operation: createUser,
    variables: (req) => ({ input: createInput(req) }), result: (d) => restUser(d.createUser), docs: userDocs,
  },
  {
    method: 'POST', path: `${SMI_PREFIX}/users/:userId`, operationId: 'createUserWithId', summary: 'Create a user with the id in the path',
    tag: 'Users', scope: 'b2b', status: 201, operation: createUser,
    variables: (req) => ({ input: createInput(req) }), result: (d) => restUser(d.createUser), docs: userDocs,
  },
  {
    method: 'GET', path: `${SMI_PREFIX}/users/:userId`, operationId: 'getUser', summary: 'Retrieve a user',
    tag: 'Users', scope: 'b2b', operation: `query GetUser($userId: ID!) { user(userId: $userId) { ${USER_FIELDS} } }`,
    variables: (req) => ({ userId: req.params.userId }), result: (d, req) => restUser(d.user, req.params.userId),
    docs: { response: userSchema },
  },
  {
    method: 'PUT', path: `${SMI_PREFIX}/users/:userId`, operationId: 'updateUser', summary: 'Replace the mutable fields of a user (absent fields become null)',
    tag: 'Users', scope: 'b2b', operation: updateUser,
    variables: (req) => ({ userId: req.params.userId, input: updateInput(req), mode: 'REPLACE' }), result: (d) => restUser(d.updateUser), docs: userDocs,
  },
  {
    method: 'PATCH', path: `${SMI_PREFIX}/users/:userId`, operationId: 'patchUser', summary: 'Change only the fields sent (null clears one)',
    tag: 'Users', scope: 'b2b', operation: updateUser,
    variables: (req) => ({ userId: req.params.userId, input: updateInput(req), mode: 'MERGE' }), result: (d) => restUser(d.updateUser), docs: userDocs,
  },
  {
    method: 'PUT', path: `${SMI_PREFIX}/users/:userId/enrollment`, operationId: 'enrollUser', summary: 'Set the enrollment status (accepted, pending, rejected; any case)',
    tag: 'Users', scope: 'b2b',
    operation: `mutation EnrollUser($userId: ID!, $status: EnrollmentStatus!) { enrollUser(userId: $userId, status: $status) { ${USER_FIELDS} } }`,
    variables: (req) => {
      const status = pick(objectBody(req), 'enrollmentStatus', 'status');
      if (typeof status !== 'string') throw badInput('enrollmentStatus is required: accepted, pending or rejected', 'enrollmentStatus');
      return { userId: req.params.userId, status: status.trim().toUpperCase() };
    },
    result: (d) => restUser(d.enrollUser),
    docs: {
      requestBody: closedBody({ type: 'object', properties: { enrollmentStatus: { type: 'string', enum: ['accepted', 'pending', 'rejected'], description: 'Any case' } }, required: ['enrollmentStatus'] }, { status: 'enrollmentStatus' }),
      requestExample: { enrollmentStatus: 'accepted' }, response: userSchema,
    },
  },
];
