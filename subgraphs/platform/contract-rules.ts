/**
 * Rules an area enforces that the gateway's REST contract (OpenAPI, multipart limits) must state too:
 * kept here so that the gateway describes them without importing an area.
 */

/** Longest accepted device id (an IMEI has 15 digits; other identifiers are allowed). */
export const DEVICE_ID_MAX = 64;

/** Largest provider file accepted, in bytes (decoded). */
export const MAX_FILE_BYTES = 512 * 1024;
/** Content types a provider file may have: the upload refuses others, and retrieval answers with one of them. */
export const ALLOWED_CONTENT_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/heic', 'application/pdf', 'text/plain'] as const;
