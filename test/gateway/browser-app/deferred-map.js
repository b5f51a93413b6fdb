/* global document */
/**
 * A driver screen that must not wait for its slowest field: Apollo Client 4 with HttpLink and
 * `Defer20220824Handler` asks for the driver at once and the Risk Index map of their area with `@defer`.
 * Every result the watched query emits is recorded on window.emissions (what the screen had: the driver,
 * the map, Apollo Client's dataState), and the screen shows the driver, then the map. Bundled by esbuild in
 * test/gateway/browser-app.test.ts; reads its settings from the page's #config element.
 */
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import possibleTypes from '../../../schema/possible-types.json';

const config = JSON.parse(document.getElementById('config').textContent);
const client = new ApolloClient({
  link: new HttpLink({ uri: config.graphqlUrl, headers: { authorization: `Bearer ${config.token}` } }),
  cache: new InMemoryCache({ possibleTypes }),
  incrementalHandler: new Defer20220824Handler(),
});

const SCREEN = gql`
  query DriverWithMap($userId: ID!, $wkt: WKT!) {
    user(userId: $userId) { id userId homeZip }
    ... @defer(label: "map") { riskIndex(wkt: $wkt, radius: 0.01) { map } }
  }`;

const emissions = [];
globalThis.emissions = emissions;
const show = (id, text) => { document.getElementById(id).textContent = text; };

client.watchQuery({ query: SCREEN, variables: { userId: config.userId, wkt: config.wkt } }).subscribe({
  next({ data, dataState, error }) {
    if (error) { show('error', error.message); document.body.dataset.state = 'error'; return; }
    emissions.push({ dataState, user: Boolean(data?.user), map: Boolean(data?.riskIndex?.map) });
    if (data?.user) { show('home-zip', data.user.homeZip); document.body.dataset.state = 'driver'; }
    if (data?.riskIndex?.map) { show('map-size', String(data.riskIndex.map.length)); document.body.dataset.state = 'map'; }
  },
  error(error) { show('error', error.message); document.body.dataset.state = 'error'; },
});
