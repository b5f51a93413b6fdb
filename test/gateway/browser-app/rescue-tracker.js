/* global document */
/**
 * A "track my rescue" screen on another origin, as a frontend team would write it: it dispatches a
 * rescue with Apollo Client 4 over HTTP (or is given one), then watches it with the `rescueUpdated`
 * subscription and lists each status as it arrives. `transport` picks how the subscription travels: `ws` is Apollo's
 * GraphQLWsLink (graphql-ws) behind a split link, `http` is Apollo's HttpLink alone (multipart
 * subscriptions), `sse` is graphql-sse's own client (distinct connections mode). The app names itself
 * with Apollo Client's client awareness headers. It keeps the
 * `extensions.event.id` of the last result pushed: paused (as a dropped connection would) and resumed, it
 * subscribes again `after` it and gets the events it missed, then live ones. Bundled by esbuild in
 * test/gateway/browser-app.test.ts; reads its settings from the page's #config element.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import { createClient as createWsClient } from 'graphql-ws';
import { createClient as createSseClient } from 'graphql-sse';
import possibleTypes from '../../../schema/possible-types.json';

const config = JSON.parse(document.getElementById('config').textContent);
const authorization = `Bearer ${config.token}`;

const http = new HttpLink({ uri: config.graphqlUrl, headers: { authorization } });
const ws = new GraphQLWsLink(createWsClient({
  url: config.graphqlUrl.replace(/^http/, 'ws'),
  connectionParams: { authorization },
  retryAttempts: 0,
  // How the socket closed (a refused upgrade, a server's 44xx close), for the screen to say.
  on: { closed: (event) => { document.getElementById('closed').textContent = `${event.code} ${event.reason}`.trim(); } },
}));
const isSubscription = ({ query }) => {
  const definition = getMainDefinition(query);
  return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
};
const client = new ApolloClient({
  link: config.transport === 'http' ? http : ApolloLink.split(isSubscription, ws, http),
  cache: new InMemoryCache({ possibleTypes }),
  clientAwareness: { name: 'rescue-tracker', version: '1.4.0' },
});

const DISPATCH = gql`
  mutation DispatchRescue($input: RescueDispatchInput!) {
    dispatchRescue(service: BATTERY, input: $input) { id reqId status }
  }`;
const RESCUE_UPDATED = `
  subscription TrackRescue($reqId: ID!, $after: ID) {
    rescueUpdated(reqId: $reqId, after: $after) { id reqId status etaMinutes updatedAt }
  }`;

const byId = (id) => document.getElementById(id);
const setState = (state) => { document.body.dataset.state = state; };

/** The id of the last event pushed (a result's `extensions.event.id`): where to resume. */
let lastEventId;

/** Appends each status pushed as it arrives, with its event (the test asserts none missing or repeated). */
function show(rescue, event) {
  const item = document.createElement('li');
  item.textContent = rescue.status;
  if (event) {
    item.dataset.eventId = event.id;
    lastEventId = event.id;
  }
  byId('statuses').append(item);
  if (rescue.status === 'COMPLETED' || rescue.status === 'CANCELLED') setState('finished');
}

function fail(error) {
  byId('error').textContent = String(error?.message ?? (error?.code ? `closed ${error.code} ${error.reason}` : error));
  setState('error');
}

/**
 * Over GraphQLWsLink, or over HttpLink's multipart subscriptions when it is the only link; Apollo
 * Client hands each result's `extensions` with its data. Returns how to stop watching.
 */
function watchWithApolloClient(reqId, after) {
  const variables = { reqId, after };
  const subscription = client.subscribe({ query: gql(RESCUE_UPDATED), variables }).subscribe({
    next: ({ data, error, extensions }) => (
      error ? fail(error) : show(data.rescueUpdated, extensions?.event)),
    error: fail,
  });
  return () => subscription.unsubscribe();
}

function watchOverSse(reqId, after) {
  const sse = createSseClient({ url: config.streamUrl, headers: { authorization }, retryAttempts: 0 });
  return sse.subscribe({ query: RESCUE_UPDATED, variables: { reqId, after }, operationName: 'TrackRescue' }, {
    next: ({ data, errors, extensions }) => (
      errors ? fail(errors[0]) : show(data.rescueUpdated, extensions?.event)),
    error: fail,
    complete: () => {},
  });
}

/** Stops the subscription watching now. */
let stopWatching = () => {};

/** Shows the rescue and watches it over the configured transport, after the event `after` when given. */
function track(reqId, after) {
  byId('req-id').textContent = reqId;
  stopWatching = (config.transport === 'sse' ? watchOverSse : watchWithApolloClient)(reqId, after);
  setState('watching');
}

byId('pause').addEventListener('click', () => {
  stopWatching();
  setState('paused');
});
byId('resume').addEventListener('click', () => track(byId('req-id').textContent, lastEventId));

// Opened with a rescue (a link from elsewhere), the screen watches it; else it books one first.
if (config.reqId) {
  track(config.reqId);
} else {
  client.mutate({ mutation: DISPATCH, variables: { input: { sessionId: config.sessionId, disablementLocation: config.location, batteryService: 'JUMP' } } })
    .then(({ data }) => {
      show({ status: data.dispatchRescue.status });
      track(data.dispatchRescue.reqId);
    }, fail);
}
