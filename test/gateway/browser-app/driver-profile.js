/* global document, window */
/**
 * A small frontend on another origin, as a frontend team would write it: Apollo Client 4 with
 * `new InMemoryCache()` given only the published possible types (no key fields, no type policies).
 * It shows a driver's profile (user, bookings with vehicles, latest score) from one query and edits
 * the home ZIP with `updateUser`; the watched profile re-renders from the cache. Bundled by esbuild
 * in test/gateway/browser-app.test.ts; reads its settings from the page's #config element.
 */
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { loadDevMessages, loadErrorMessages } from '@apollo/client/dev';
import possibleTypes from '../../../schema/possible-types.json';

loadDevMessages();
loadErrorMessages();

const config = JSON.parse(document.getElementById('config').textContent);
const client = new ApolloClient({
  link: new HttpLink({ uri: config.graphqlUrl, headers: { authorization: `Bearer ${config.token}` } }),
  cache: new InMemoryCache({ possibleTypes }),
});

const SCORE = gql`
  fragment Score on PrequalCoverageScoreResult {
    ... on PrequalCoverageScore { score modelVersion }
    ... on MissingUserData { missingFields }
  }`;
const PROFILE = gql`
  query DriverProfile($userId: ID!) {
    user(userId: $userId) {
      id userId homeZip enrollmentStatus
      bookings(first: 20) { nodes { id bookingId status vehicle { id vin deviceId } } }
      prequalCoverageScore { ...Score }
    }
  }
  ${SCORE}`;
// The score depends on the ZIP: the mutation selects it too, so the cache has no stale score.
const UPDATE_ZIP = gql`
  mutation UpdateHomeZip($userId: ID!, $homeZip: ZipCode!) {
    updateUser(userId: $userId, input: { homeZip: $homeZip }) { id homeZip prequalCoverageScore { ...Score } }
  }
  ${SCORE}`;

const byId = (id) => document.getElementById(id);
const show = (id, text) => { byId(id).textContent = text; };

function render(user) {
  show('home-zip', user.homeZip ?? '');
  const score = user.prequalCoverageScore;
  show('score', score.__typename === 'PrequalCoverageScore' ? String(score.score) : `missing: ${score.missingFields.join(', ')}`);
  byId('bookings').replaceChildren(...user.bookings.nodes.map((booking) => {
    const item = document.createElement('li');
    item.textContent = `${booking.bookingId} ${booking.status} ${booking.vehicle?.vin ?? ''}`;
    return item;
  }));
  document.body.dataset.state = 'ready';
}

function fail(error) {
  show('error', `Could not reach the graph at ${config.graphqlUrl}: ${error.message}`);
  document.body.dataset.state = 'error';
}

client.watchQuery({ query: PROFILE, variables: { userId: config.userId } }).subscribe({
  next: ({ data, error }) => (error ? fail(error) : data?.user && render(data.user)),
  error: fail,
});

byId('save').addEventListener('click', () => {
  document.body.dataset.state = 'saving';
  client.mutate({ mutation: UPDATE_ZIP, variables: { userId: config.userId, homeZip: byId('zip').value } })
    .then(() => { document.body.dataset.state = 'saved'; }, fail);
});

window.cacheContents = () => client.cache.extract();
