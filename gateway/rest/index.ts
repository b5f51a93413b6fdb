import type { RestRoute } from './types.ts';
import { userRoutes } from './users.ts';
import { scoringRoutes } from './scoring.ts';
import { bookingRoutes } from './booking.ts';
import { riskRoutes } from './risk.ts';
import { registrationRoutes } from './registration.ts';
import { roadsideRoutes } from './roadside.ts';
import { webhookRoutes } from './webhooks.ts';

/** Every REST compatibility path, one table per area. */
export const restRoutes: readonly RestRoute[] = [
  ...userRoutes,
  ...scoringRoutes,
  ...bookingRoutes,
  ...riskRoutes,
  ...registrationRoutes,
  ...roadsideRoutes,
  ...webhookRoutes,
];
