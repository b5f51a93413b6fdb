import type { EntityManager } from '@mikro-orm/core';
import { recordEvent } from '../../platform/webhooks/outbox.ts';
import type { Consent, RegisteredDevice } from '../entities.ts';

const P = '/registration/v2';

/** Records consent.changed on `em` (before the flush that writes the consent): the record as GET /consents/{userId} lists it. */
export function recordConsentEvent(em: EntityManager, consent: Consent, recordedAt: Date) {
  recordEvent(em, {
    type: 'consent.changed', resourceKey: `consent:${consent.userId}`, resourcePath: `${P}/consents/${encodeURIComponent(consent.userId)}`,
    resource: {
      consentId: consent.id, userId: consent.userId, type: consent.type, version: consent.version, action: consent.action,
      granted: consent.action === 'granted', timestamp: consent.timestamp.toISOString(), source: consent.source, recordedAt: recordedAt.toISOString(),
    },
  });
}

/** Records device.status_changed on `em` when a device became Active or Inactive. */
export function recordDeviceStatusEvent(em: EntityManager, device: RegisteredDevice, previousStatus: string, at = new Date()) {
  if (device.status === previousStatus) return;
  recordEvent(em, {
    type: 'device.status_changed', resourceKey: `device:${device.deviceId}`, resourcePath: `${P}/devices/${encodeURIComponent(device.deviceId)}`,
    resource: {
      deviceId: device.deviceId, type: device.type, status: device.status, previousStatus,
      replacedByDeviceId: device.replacedByDeviceId ?? null, replacesDeviceId: device.replacesDeviceId ?? null, updatedAt: at.toISOString(),
    },
  });
}
