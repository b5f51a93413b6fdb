import { badInput, notFound } from '../platform/errors.ts';
import { closedBody, defined, objectBody, pick } from '../platform/rest/body.ts';
import { typedRoute } from '../platform/rest/operation.ts';
import type { RestRequest, RestRoute } from '../platform/rest/types.ts';
import { restUser } from './representation.ts';
import { CreateUser, EnrollUser, GetUser, UpdateUser } from './rest.generated.ts';

export const SMI_PREFIX = '/shared-mobility-insights/v2';

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

const userDocs = { requestBody: userInputSchema, requestExample: { userID: 'driver-001', dateOfBirth: '1988-02-11', homeZip: '60601' }, response: userSchema };

export const userRoutes: readonly RestRoute[] = [
  typedRoute(CreateUser, {
    method: 'POST', path: `${SMI_PREFIX}/users`, operationId: 'createUser', summary: 'Create a user (id generated when omitted or null)',
    tag: 'Users', scope: 'b2b', status: 201,
    variables: (req) => ({ input: createInput(req) }), result: (d) => restUser(d.createUser), docs: userDocs,
  }),
  typedRoute(CreateUser, {
    method: 'POST', path: `${SMI_PREFIX}/users/:userId`, operationId: 'createUserWithId', summary: 'Create a user with the id in the path',
    tag: 'Users', scope: 'b2b', status: 201,
    variables: (req) => ({ input: createInput(req) }), result: (d) => restUser(d.createUser), docs: userDocs,
  }),
  typedRoute(GetUser, {
    method: 'GET', path: `${SMI_PREFIX}/users/:userId`, operationId: 'getUser', summary: 'Retrieve a user',
    tag: 'Users', scope: 'b2b',
    variables: (req) => ({ userId: req.params.userId }),
    result: (d, req) => {
      if (!d.user) throw notFound('User', req.params.userId);
      return restUser(d.user);
    },
    docs: { response: userSchema },
  }),
  typedRoute(UpdateUser, {
    method: 'PUT', path: `${SMI_PREFIX}/users/:userId`, operationId: 'updateUser', summary: 'Replace the mutable fields of a user (absent fields become null)',
    tag: 'Users', scope: 'b2b',
    variables: (req) => ({ userId: req.params.userId, input: updateInput(req), mode: 'REPLACE' }), result: (d) => restUser(d.updateUser), docs: userDocs,
  }),
  typedRoute(UpdateUser, {
    method: 'PATCH', path: `${SMI_PREFIX}/users/:userId`, operationId: 'patchUser', summary: 'Change only the fields sent (null clears one)',
    tag: 'Users', scope: 'b2b',
    variables: (req) => ({ userId: req.params.userId, input: updateInput(req), mode: 'MERGE' }), result: (d) => restUser(d.updateUser), docs: userDocs,
  }),
  typedRoute(EnrollUser, {
    method: 'PUT', path: `${SMI_PREFIX}/users/:userId/enrollment`, operationId: 'enrollUser', summary: 'Set the enrollment status (accepted, pending, rejected; any case)',
    tag: 'Users', scope: 'b2b',
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
  }),
];
