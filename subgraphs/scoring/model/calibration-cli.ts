/** `npm run calibrate`: recomputes the score model's calibration and writes calibration.json (commit it). */
import { writeFileSync } from 'node:fs';
import { calibrate, CALIBRATION_FILE } from './calibration.ts';

writeFileSync(CALIBRATION_FILE, `${JSON.stringify(calibrate(), null, 2)}\n`);
console.log(`wrote ${CALIBRATION_FILE}`);
