import { stringify } from 'csv-stringify/sync';

/**
 * RFC 4180: a header row, fields quoted where needed, CRLF line ends; null is an empty field, numbers
 * as JavaScript writes them (no locale). Text that a spreadsheet would run as a formula (beginning
 * with `=`, `+`, `-`, `@`, tab or CR; OWASP "CSV injection") is prefixed with `'`; numbers are not.
 */
export const csvText = (columns: readonly string[], records: Record<string, unknown>[]) =>
  stringify(records, { header: true, columns: [...columns], record_delimiter: 'windows', eof: true, escape_formulas: true });
