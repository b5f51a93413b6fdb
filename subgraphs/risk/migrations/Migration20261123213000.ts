import { Migration } from '@mikro-orm/migrations';

/** Real FARS crashes: more FARS columns, density-based index inputs and breakdowns per cell. */
export class Migration20261123213000 extends Migration {

  override name = 'Migration20261123213000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "risk"."risk_crashes" add column "peds" smallint null, add column "drunk_drivers" smallint null, add column "rural_urban" smallint null;`);
    // The aggregates are derived data: emptied here, rebuilt on the next start (or `npm run risk:ingest -- rebuild`).
    this.addSql(`delete from "risk"."risk_crash_cells";`);
    this.addSql(`alter table "risk"."risk_crash_cells" drop column "weighted_per_year", drop column "exposure_mvkt";`);
    this.addSql(`alter table "risk"."risk_crash_cells" add column "area_km2" double precision not null, add column "fatal_rate" double precision not null, add column "fatality_rate" double precision not null, add column "rate" double precision not null, add column "by_month" jsonb not null, add column "by_weather" jsonb not null, add column "by_light" jsonb not null, add column "by_road_class" jsonb not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "risk"."risk_crash_cells";`);
    this.addSql(`alter table "risk"."risk_crash_cells" drop column "area_km2", drop column "fatal_rate", drop column "fatality_rate", drop column "rate", drop column "by_month", drop column "by_weather", drop column "by_light", drop column "by_road_class";`);
    this.addSql(`alter table "risk"."risk_crash_cells" add column "weighted_per_year" double precision not null, add column "exposure_mvkt" double precision not null;`);
    this.addSql(`alter table "risk"."risk_crashes" drop column "peds", drop column "drunk_drivers", drop column "rural_urban";`);
  }

}
