import { answer, arrayOf, component, nullable } from '../../platform/rest/components.ts';
import type { JsonSchema } from '../../platform/rest/types.ts';
import { accepted, LIST_FIELDS, MAX_MIN_FATALITIES, RURAL_URBAN_VALUES, type CrashFilterField, type ListField } from './crash-filter.ts';

/** What each filter name selects, for the REST parameters (and any other face that takes them). */
const MEANING: Record<CrashFilterField, string> = {
  years: 'Calendar years (the data hold 2013-2015)',
  months: 'Months, 1 = January',
  daysOfWeek: 'Days of the week, 1 = Sunday ... 7 = Saturday (FARS DAY_WEEK)',
  hours: 'Hours of the day, local time (a crash of unknown hour matches none)',
  lightConditions: 'Light conditions (FARS LGT_COND), by the names accidentSummary.byLight returns, case-insensitive',
  weather: 'Atmospheric conditions (FARS WEATHER), by the names accidentSummary.byWeather returns, case-insensitive',
  functionClasses: 'Road function classes (FARS FUNC_SYS; ROAD_FNC before 2015 mapped onto it), by the names accidentSummary.byRoadClass returns',
  ruralUrban: 'Rural or urban road (FARS RUR_URB; from ROAD_FNC before 2015), case-insensitive',
  drunkDriver: 'true: at least one drinking driver (FARS DRUNK_DR > 0); false: none',
  pedestrians: 'true: at least one person not in a vehicle, pedestrian or cyclist (FARS PEDS > 0); false: none',
  minFatalities: 'Crashes with at least this many people killed',
};

const listDoc = (field: ListField): JsonSchema & { description: string } => ({
  type: 'string', description: `${MEANING[field]}: ${accepted(field)}, comma-separated (a name's own commas are kept)`,
  ...(LIST_FIELDS[field].kind === 'ints' ? { pattern: '^\\s*\\d+\\s*(,\\s*\\d+\\s*)*$' } : {}),
});

/** The filter's query parameters, as the OpenAPI document states them. */
export const crashFilterQueryDocs = (): Record<CrashFilterField, JsonSchema & { description: string }> => ({
  ...Object.fromEntries((Object.keys(LIST_FIELDS) as ListField[]).map((f) => [f, listDoc(f)])) as Record<ListField, JsonSchema & { description: string }>,
  ruralUrban: { type: 'string', enum: Object.keys(RURAL_URBAN_VALUES), description: MEANING.ruralUrban },
  drunkDriver: { type: 'boolean', description: MEANING.drunkDriver },
  pedestrians: { type: 'boolean', description: MEANING.pedestrians },
  minFatalities: { type: 'integer', minimum: 1, maximum: MAX_MIN_FATALITIES, description: MEANING.minFatalities },
});

const ints = nullable(arrayOf({ type: 'integer' }));
const names = nullable(arrayOf({ type: 'string' }));

/** The filter an answer applied (appliedFilter), or null. */
export const appliedFilterSchema = nullable(component('RiskAppliedFilter', answer({
  key: { type: 'string', description: 'The same text for every spelling of the filter: the query parameters that give it' },
  years: ints, months: ints, daysOfWeek: ints, hours: ints, lightConditions: names, weather: names, functionClasses: names,
  ruralUrban: nullable({ type: 'string', enum: Object.keys(RURAL_URBAN_VALUES) }),
  drunkDriver: nullable({ type: 'boolean' }), pedestrians: nullable({ type: 'boolean' }), minFatalities: nullable({ type: 'integer' }),
}, { description: 'The crash filter applied, normalised (lists sorted, names as the summaries spell them)' })));
