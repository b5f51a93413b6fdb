/** What the stand-alone benchmarks share: bounded `--name=value` flags and percentiles. */

/** The text given as `--name=value`, else `fallback`. */
export function textFlag(name: string, fallback: string): string {
  const prefix = `--${name}=`;
  return process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length) ?? fallback;
}

/** The number given as `--name=value`, else `fallback`; positive, and never over `max` (the machine is shared). */
export function flag(name: string, fallback: number, max: number): number {
  const value = Number(textFlag(name, String(fallback)));
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return Math.min(value, max);
}

/** Nearest-rank percentile `p` of `values` (in any order); NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
}
