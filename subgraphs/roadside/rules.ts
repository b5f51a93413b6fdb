/** Rules the roadside area enforces that its REST contract (OpenAPI, multipart limits) states too. */

/** Largest provider file accepted, in bytes (decoded). */
export const MAX_FILE_BYTES = 512 * 1024;
/** Content types a provider file may have: the upload refuses others, and retrieval answers with one of them. */
export const ALLOWED_CONTENT_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/heic', 'application/pdf', 'text/plain'] as const;

/** A provider file's kinds (any case on input). */
export const FILE_TYPES = ['PHOTO', 'INVOICE', 'RECEIPT', 'SIGNATURE', 'DAMAGE_REPORT', 'OTHER'] as const;

/** Fuel a gas call delivers, where a locked-out vehicle's keys are, what a battery call does (any case on input). */
export const FUEL_TYPES = ['REGULAR', 'MIDGRADE', 'PREMIUM', 'DIESEL'] as const;
export const KEYS_LOCATIONS = ['IN_VEHICLE', 'IN_TRUNK', 'LOST', 'BROKEN'] as const;
export const BATTERY_SERVICES = ['JUMP', 'REPLACE'] as const;

/** A provisioned asset's service weights (any case on input). */
export const SERVICE_WEIGHTS = ['LIGHT', 'MEDIUM', 'HEAVY'];
/** Longest provisioning text fields, in characters. */
export const PROVISIONING_LIMITS = {
  firstName: 128, lastName: 128, address1: 255, address2: 255, city: 128, emailAddress: 255, phone: 32, companyName: 255, make: 64, model: 128,
} as const;

/** A provisioned member's contact fields, as the roadside member service checks them. */
export const STATE_CODE_PATTERN = /^[A-Za-z]{2}$/;
export const PHONE_PATTERN = /^\+?[0-9 ().-]{7,20}$/;
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
