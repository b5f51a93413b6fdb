import type { IdeExample } from '../platform/subgraph.ts';

/**
 * The GraphQL IDE's example tabs for fleet booking: validated against the API schema (test/gateway/ide.test.ts) and
 * typed by `npm run codegen`.
 */
export const ideExamples: readonly IdeExample[] = [
  {
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
];
