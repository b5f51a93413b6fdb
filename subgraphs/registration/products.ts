import { PRODUCT_SUBJECTS, type ProductName } from './rules.ts';

/**
 * The configured product list and the consents each product needs. Consent types are a configured
 * list too, so a misspelt type is refused instead of silently never satisfying a product.
 */
export interface ProductDefinition {
  /** The canonical name, as partners send it in `/users/{userId}/products/{productName}`. */
  name: string;
  description: string;
  /** Consent types that must be currently granted by the user before registration. */
  requiredConsents: readonly string[];
  /** Whether a user, a vehicle, or both can be registered for the product. */
  subjects: readonly ('user' | 'vehicle')[];
}

export interface ConsentTypeDefinition {
  type: string;
  description: string;
}

export const CONSENT_TYPES: readonly ConsentTypeDefinition[] = [
  { type: 'location-tracking', description: 'Collect the location of the device while driving.' },
  { type: 'driving-data-sharing', description: 'Share driving behaviour data with the partner (scores, events).' },
  { type: 'vehicle-data-collection', description: 'Collect diagnostic data from the vehicle.' },
  { type: 'marketing', description: 'Receive marketing communication.' },
];

const PRODUCT_DETAILS: Record<ProductName, Pick<ProductDefinition, 'description' | 'requiredConsents'>> = {
  'Driving Behavior': {
    description: 'Trip detection and driving behaviour scoring from the phone or the OBD-II device.',
    requiredConsents: ['location-tracking', 'driving-data-sharing'],
  },
  'Crash Detection': {
    description: 'Detects crashes while driving and alerts emergency contacts.',
    requiredConsents: ['location-tracking'],
  },
  'Vehicle Health': {
    description: 'Diagnostic trouble codes and maintenance reminders from the vehicle.',
    requiredConsents: ['vehicle-data-collection'],
  },
  'Roadside Assistance': {
    description: 'Access to roadside rescue services.',
    requiredConsents: [],
  },
};

export const PRODUCTS: readonly ProductDefinition[] = (Object.keys(PRODUCT_SUBJECTS) as ProductName[])
  .map((name) => ({ name, subjects: PRODUCT_SUBJECTS[name], ...PRODUCT_DETAILS[name] }));

/** Names compare without case, spaces, dashes or underscores: "driving-behavior" is "Driving Behavior". */
const normalise = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

const byKey = new Map(PRODUCTS.map((product) => [normalise(product.name), product]));

export function findProduct(name: string): ProductDefinition | undefined {
  return byKey.get(normalise(name));
}

export const findConsentType = (type: string): ConsentTypeDefinition | undefined =>
  CONSENT_TYPES.find((c) => c.type === type.trim().toLowerCase());
