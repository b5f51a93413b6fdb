import type { IdeExample } from '../platform/subgraph.ts';

/**
 * The GraphQL IDE's example tabs for roadside rescue: validated against the API schema (test/gateway/ide.test.ts) and
 * typed by `npm run codegen`.
 */
export const ideExamples: readonly IdeExample[] = [
  {
    query: `# Roadside rescue (scope roadside): what can be dispatched near a position, and where to tow.
query RescueNearby($latitude: Float!, $longitude: Float!) {
  rescueAvailability(latitude: $latitude, longitude: $longitude) {
    available
    services { service available providerCount nearestProviderMiles etaMinutes }
  }
  towLocations(latitude: $latitude, longitude: $longitude, radiusMiles: 25, limit: 5) {
    locationId name type city state distanceMiles
  }
}`,
    variables: { latitude: 41.8781, longitude: -87.6298 },
  },
  {
    query: `# A dispatched rescue: status, provider position and ETA (scope roadside).
query RescueStatus($reqId: ID!) {
  rescue(reqId: $reqId) {
    id reqId service status
    providerPosition { latitude longitude }
  }
  rescueEta(reqId: $reqId) { etaMinutes etaAt distanceMiles }
}`,
    variables: { reqId: 'REQ-0001' },
  },
  {
    query: `# Track a rescue live (scope roadside): run this, then move the rescue along (updateRescueStatus, or
# POST /services/roadside/v1/rescue/statusUpdate); each change is pushed here over a WebSocket (graphql-ws).
subscription RescueTrack($reqId: ID!) {
  rescueUpdated(reqId: $reqId) {
    id reqId status etaMinutes updatedAt
    providerPosition { latitude longitude }
  }
}`,
    variables: { reqId: 'REQ-0001' },
  },
];
