import { Migration } from '@mikro-orm/migrations';

/**
 * The version of the loaded data: one row, a new id written with every rebuild of the aggregates (the
 * end of every load and ingest). Answers are cached and tagged by it (services/answer-cache.ts, the REST ETag).
 */
export class Migration20261124160000 extends Migration {

  override name = 'Migration20261124160000';

  override up(): void | Promise<void> {
    this.addSql(`create table "risk"."risk_data_version" ("id" smallint primary key check ("id" = 1), "version" varchar(64) not null, "loaded_at" timestamptz not null);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "risk"."risk_data_version";`);
  }

}
