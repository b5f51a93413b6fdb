/** Rules the booking area enforces that its REST contract (OpenAPI) states too. */

/** Longest accepted device id (an IMEI has 15 digits; other identifiers are allowed). */
export const DEVICE_ID_MAX = 64;
