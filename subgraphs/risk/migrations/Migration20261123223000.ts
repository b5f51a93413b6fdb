import { Migration } from '@mikro-orm/migrations';

/** farsInfo lists an area's crashes most recent first: an index in that order lets a large area stop after `limit` rows. */
export class Migration20261123223000 extends Migration {

  override name = 'Migration20261123223000';

  override up(): void | Promise<void> {
    this.addSql(`create index "risk_crashes_recent_idx" on "risk"."risk_crashes" ("year" desc, "month" desc, "day" desc, "hour" desc, "case_number" asc);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "risk"."risk_crashes_recent_idx";`);
  }

}
