import { LICENSE_STATUSES, type LicenseStatus } from './summary.ts';

export type Json = Record<string, unknown>;

export const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
export const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
export const objects = (v: unknown): Json[] => (Array.isArray(v) ? v.filter((x): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x)) : []);
export const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

/** Maps a provider's license status (`NOT VALID`, `suspended`, ...) onto our scale; unknown values are UNKNOWN. */
export function licenseStatus(reported: string): LicenseStatus {
  const key = reported.trim().toUpperCase().replace(/[\s-]+/g, '_');
  return (LICENSE_STATUSES as readonly string[]).includes(key) ? (key as LicenseStatus) : 'UNKNOWN';
}
