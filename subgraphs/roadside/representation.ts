import type { RescueStatus, RestRescueFragment } from './rest.generated.ts';

/**
 * The REST body of the roadside resources that differ from their GraphQL selection (the others are
 * their fragment in rest.graphql as selected): REST answers feed them the GraphQL result, rescue events
 * the stored entity, so that a webhook payload is what GET answers by construction.
 */

/** REST spells EN_ROUTE as EN-ROUTE. */
export const restStatus = (status: RescueStatus) => (status === 'EN_ROUTE' ? 'EN-ROUTE' : status);

/**
 * A rescue as the documented `serviceRequest`; rescue events pass the status it had before the change,
 * which the payload carries as `previousStatus`, after `status`.
 */
export function restRescue(r: RestRescueFragment, previousStatus?: RescueStatus) {
  return {
    requestId: r.reqId, sessionId: r.sessionId, status: restStatus(r.status),
    ...(previousStatus && { previousStatus: restStatus(previousStatus) }),
    serviceType: r.service.toLowerCase(),
    consumer: { ...r.customer, name: [r.customer.firstName, r.customer.lastName].filter(Boolean).join(' ') || null },
    vehicle: r.vehicle, cost: r.cost, payPerUse: r.payPerUse, requestCreationTime: r.createdAt,
    eta: r.etaMinutes, etaTime: r.etaAt, disablementAddress: r.disablement, destinationAddress: r.destination,
    details: r.details, provider: r.provider, driver: { name: r.driverName, position: r.providerPosition },
    cancelReason: r.cancelReason, statusHistory: r.statusHistory.map((e) => ({ ...e, status: restStatus(e.status) })),
    updatedTime: r.updatedAt,
  };
}
