import type { EntityManager } from '@mikro-orm/core';
import { recordEvent } from '../../platform/webhooks/outbox.ts';
import type { Consent, ConsentAction, DeviceStatus, DeviceType, RegisteredDevice } from '../entities.ts';
import { restConsent, restDevice } from '../representation.ts';
import type {
  ConsentAction as GraphqlConsentAction, RegisteredDeviceStatus, RegisteredDeviceType,
} from '../rest.generated.ts';

const P = '/registration/v2';

/** The stored values as GraphQL spells them (what the resolvers answer). */
const graphqlAction = (action: ConsentAction): GraphqlConsentAction =>
  ({ granted: 'GRANTED', withdrawn: 'WITHDRAWN' } as const)[action];
const graphqlDeviceType = (type: DeviceType): RegisteredDeviceType => ({ mobile: 'MOBILE', obd: 'OBD' } as const)[type];
const graphqlDeviceStatus = (status: DeviceStatus): RegisteredDeviceStatus =>
  ({ Active: 'ACTIVE', Inactive: 'INACTIVE' } as const)[status];

/**
 * Records consent.changed on `em` (before the flush that writes the consent): the record as GET /consents/{userId}
 * lists it.
 */
export function recordConsentEvent(em: EntityManager, consent: Consent, recordedAt: Date) {
  const resource = restConsent({
    consentId: consent.id, userId: consent.userId, type: consent.type, version: consent.version,
    action: graphqlAction(consent.action), granted: consent.action === 'granted',
    timestamp: consent.timestamp.toISOString(), source: consent.source, recordedAt: recordedAt.toISOString(),
  });
  recordEvent(em, {
    type: 'consent.changed', resourceKey: `consent:${consent.userId}`,
    resourcePath: `${P}/consents/${encodeURIComponent(consent.userId)}`, resource,
  });
}

/**
 * Records device.status_changed on `em` when a device became Active or Inactive: the device's own fields as
 * GET /devices/{deviceId} returns them (not its associations, which the event does not carry), with `previousStatus`.
 */
export function recordDeviceStatusEvent(
  em: EntityManager, device: RegisteredDevice, previousStatus: string, at = new Date(),
) {
  if (device.status === previousStatus) return;
  const { deviceId, type, status, replacedByDeviceId, replacesDeviceId, updatedAt } = restDevice({
    deviceId: device.deviceId, type: graphqlDeviceType(device.type), status: graphqlDeviceStatus(device.status),
    replacedByDeviceId: device.replacedByDeviceId ?? null, replacesDeviceId: device.replacesDeviceId ?? null,
    createdAt: device.createdAt.toISOString(), updatedAt: at.toISOString(), currentAssociation: null, history: [],
  });
  recordEvent(em, {
    type: 'device.status_changed', resourceKey: `device:${deviceId}`,
    resourcePath: `${P}/devices/${encodeURIComponent(deviceId)}`,
    resource: { deviceId, type, status, previousStatus, replacedByDeviceId, replacesDeviceId, updatedAt },
  });
}
