import type { EntityManager } from '@mikro-orm/core';
import { recordEvent } from '../../platform/webhooks/outbox.ts';
import type { RescueRequest, RescueStatus } from '../entities.ts';

const restStatus = (status: string) => (status === 'EN_ROUTE' ? 'EN-ROUTE' : status);

/** What a rescue looks like right after a change, in the fields and spellings of GET /rescue/reqId/{reqId}. */
export interface RescueChange {
  rescue: RescueRequest;
  status: RescueStatus;
  previousStatus: RescueStatus;
  etaAt: Date | null;
  position: { latitude: number; longitude: number };
  at: Date;
  cancelReason?: string | null;
}

/**
 * Records rescue.status_changed (and rescue.cancelled for a cancellation) in the roadside outbox,
 * on `tx`, the transaction that makes the change.
 */
export function recordRescueEvents(tx: EntityManager, change: RescueChange) {
  const { rescue } = change;
  const done = change.status === 'COMPLETED' || change.status === 'CANCELLED';
  const resource = {
    requestId: rescue.reqId, sessionId: rescue.sessionId, status: restStatus(change.status), previousStatus: restStatus(change.previousStatus),
    serviceType: rescue.service.toLowerCase(), payPerUse: rescue.payPerUse, requestCreationTime: rescue.createdAt.toISOString(),
    eta: done || !change.etaAt ? null : Math.max(0, Math.ceil((change.etaAt.getTime() - change.at.getTime()) / 60000)),
    etaTime: done || !change.etaAt ? null : change.etaAt.toISOString(),
    driver: { name: rescue.driverName, position: change.position },
    cancelReason: change.cancelReason ?? rescue.cancelReason ?? null, updatedTime: change.at.toISOString(),
  };
  const event = { resourceKey: `rescue:${rescue.reqId}`, resourcePath: `/services/roadside/v1/rescue/reqId/${rescue.reqId}`, resource };
  recordEvent(tx, { type: 'rescue.status_changed', ...event });
  if (change.status === 'CANCELLED') recordEvent(tx, { type: 'rescue.cancelled', ...event });
}
