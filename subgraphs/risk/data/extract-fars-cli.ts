/**
 * Builds the shipped FARS extract: the California and Illinois rows with a known position of NHTSA's
 * national `accident` files, reduced to the columns the Risk Index uses, one gzip CSV per year.
 *   node subgraphs/risk/data/extract-fars-cli.ts <folder with accident_YYYY.csv.bz2> [years...]
 * Reads the bzip2 files with the system's `bzcat`. Writes subgraphs/risk/data/fars/accident_YYYY.csv.gz.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { parse } from 'csv-parse';
import { COVERED_STATES } from '../geometry/coverage.ts';
import { unknownPosition } from './fars.ts';

/** The columns kept (those a file lacks are left out: 2013-2014 have ROAD_FNC, 2015 RUR_URB and FUNC_SYS). */
export const EXTRACT_COLUMNS = [
  'STATE', 'ST_CASE', 'COUNTY', 'CITY', 'YEAR', 'MONTH', 'DAY', 'DAY_WEEK', 'HOUR', 'MINUTE', 'LATITUDE', 'LONGITUD',
  'FATALS', 'PERSONS', 'PEDS', 'VE_TOTAL', 'DRUNK_DR', 'RUR_URB', 'FUNC_SYS', 'ROAD_FNC', 'ROUTE', 'WRK_ZONE',
  'LGT_COND', 'WEATHER', 'MAN_COLL', 'HARM_EV',
];
export const EXTRACT_FOLDER = new URL('./fars/', import.meta.url).pathname;

const covered = new Set(COVERED_STATES.map((s) => String(s.fips)));
const csvField = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

async function extractYear(folder: string, year: string) {
  const bz = spawn('bzcat', [join(folder, `accident_${year}.csv.bz2`)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve, reject) => bz.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`bzcat exited with ${code}`)))));
  const counts = { read: 0, covered: 0, kept: 0, unknownPosition: 0 };
  let columns: string[] = [];
  async function* rows() {
    for await (const row of bz.stdout.pipe(parse({ columns: true, bom: true })) as AsyncIterable<Record<string, string>>) {
      if (!columns.length) {
        columns = EXTRACT_COLUMNS.filter((c) => c in row);
        yield `${columns.join(',')}\n`;
      }
      counts.read++;
      if (!covered.has(row.STATE)) continue;
      counts.covered++;
      if (unknownPosition(Number(row.LATITUDE), Number(row.LONGITUD))) { counts.unknownPosition++; continue; }
      counts.kept++;
      yield `${columns.map((c) => csvField(row[c] ?? '')).join(',')}\n`;
    }
  }
  const out = join(EXTRACT_FOLDER, `accident_${year}.csv.gz`);
  await pipeline(Readable.from(rows()), createGzip({ level: 9 }), createWriteStream(out));
  await exited;
  console.log(`${year}: ${counts.read} rows, ${counts.covered} in California and Illinois, ${counts.kept} kept, ${counts.unknownPosition} with an unknown position -> ${out}`);
}

const [folder, ...years] = process.argv.slice(2);
if (!folder) {
  console.error('Usage: node subgraphs/risk/data/extract-fars-cli.ts <folder with accident_YYYY.csv.bz2> [years...]');
  process.exit(2);
}
for (const year of years.length ? years : ['2013', '2014', '2015']) await extractYear(folder, year);
