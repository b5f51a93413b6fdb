/**
 * The example operations preloaded as GraphiQL tabs, one or more per area. test/gateway/ide.test.ts
 * validates every example of a composed area against the supergraph's API schema, so they cannot rot;
 * the IDE only serves the examples that validate (an area not composed yet has no tab). They select
 * the `id` of every entity they read, as a frontend with a normalising cache must
 * (test/gateway/ide-cache.test.ts).
 */
import { RISK_MAP_EXAMPLE } from '../../subgraphs/risk/rest.ts';

export type IdeArea = 'booking' | 'scoring' | 'roadside' | 'registration' | 'risk' | 'webhooks';

export interface IdeExample {
  area: IdeArea;
  /** One named operation; GraphiQL titles the tab with its name. */
  query: string;
  variables?: Record<string, unknown>;
}

export const ideExamples: readonly IdeExample[] = [
  {
    area: 'risk',
    query: `# Risk Index (public: no token needed). The area is WKT, longitude first; radius (degrees, as the original service) buffers it.
# Crashes: NHTSA FARS 2013-2015. A map of the Loop (SVG, open it in the browser): ${RISK_MAP_EXAMPLE}
# (the report's \`map\` field gives the same SVG text).
query RiskIndex($wkt: WKT!, $radius: Float) {
  riskIndex(wkt: $wkt, radius: $radius) {
    area { coverage states cellsTouched message }
    riskInfo { index maxCellIndex cellsWithCrashes riskiestCells { cell riskIndex latitude longitude } }
    accidentSummary { total fatal injury propertyDamageOnly }
    realtimeTraffic { sensors meanSpeedKph asOf }
  }
}`,
    variables: { wkt: 'POINT(-87.6298 41.8781)', radius: 0.005 },
  },
  {
    area: 'scoring',
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
    area: 'scoring',
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
  {
    area: 'booking',
    query: `# A vehicle, its paired device and its latest bookings (scope b2b).
query BookingVehicle($vin: VIN!) {
  vehicle(vin: $vin) {
    id
    vin
    deviceId
    bookings(first: 5) {
      nodes { id bookingId userId status startTimestamp estimatedEndTimestamp actualEndTimestamp }
      pageInfo { hasNextPage endCursor }
    }
  }
}`,
    variables: { vin: '1HGCM82633A004352' },
  },
  {
    area: 'booking',
    query: `# Active bookings of the organisation, with the driver resolved through federation.
query BookingActive($first: Int) {
  bookings(filter: { status: ACTIVE }, first: $first) {
    nodes {
      id
      bookingId
      vin
      startTimestamp
      user { id userId enrollmentStatus }
    }
  }
}`,
    variables: { first: 10 },
  },
  {
    area: 'roadside',
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
    area: 'roadside',
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
    area: 'roadside',
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
  {
    area: 'registration',
    query: `# Registration (scope b2b): the product catalogue and the consents each product needs.
query RegistrationCatalogue {
  registrationProducts { name description requiredConsents subjects }
}`,
  },
  {
    area: 'registration',
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
  {
    area: 'webhooks',
    query: `# Webhook subscriptions of the organisation (any token); webhookDeliveries(subscriptionId) reads a delivery log. See docs/webhooks.md.
query WebhookLog {
  webhookSubscriptions { id url eventTypes createdAt }
}`,
  },
];
