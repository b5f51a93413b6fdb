/**
 * Writes the covered states' legal boundaries (see legal-boundaries.ts) to coverage-boundaries.json,
 * which the service reads: `npm run risk:boundaries`. Building them takes seconds of geometry, too
 * much for every start and every worker thread; a test checks the file matches its inputs.
 */
import { writeFile } from 'node:fs/promises';
import { buildCoverageBoundaries } from './legal-boundaries.ts';

export const COVERAGE_BOUNDARIES_FILE = new URL('./coverage-boundaries.json', import.meta.url).pathname;
export const coverageBoundariesText = () => `${JSON.stringify(buildCoverageBoundaries())}\n`;

if (import.meta.main) {
  await writeFile(COVERAGE_BOUNDARIES_FILE, coverageBoundariesText());
  console.log(`wrote ${COVERAGE_BOUNDARIES_FILE}`);
}
