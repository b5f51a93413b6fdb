import type { RestRoute } from './types.ts';
import { userRoutes } from './users.ts';

/** Every REST compatibility path, one table per area. */
export const restRoutes: readonly RestRoute[] = [
  ...userRoutes,
];
