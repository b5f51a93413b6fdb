/** Rules the registration area enforces that its REST contract (OpenAPI) states too. */

/** The registration products, by canonical name, and what each can be registered for (a user, a vehicle). */
export const PRODUCT_SUBJECTS = {
  'Driving Behavior': ['user', 'vehicle'],
  'Crash Detection': ['user', 'vehicle'],
  'Vehicle Health': ['vehicle'],
  'Roadside Assistance': ['user', 'vehicle'],
} as const satisfies Record<string, readonly ('user' | 'vehicle')[]>;
export type ProductName = keyof typeof PRODUCT_SUBJECTS;
