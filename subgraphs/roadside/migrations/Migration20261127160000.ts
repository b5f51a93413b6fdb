import { Migration } from '@mikro-orm/migrations';
import { addOutboxSandbox, dropOutboxSandbox } from '../../platform/webhooks/outbox.ts';

/** Outbox rows and rescues say whether a sandbox organisation made them: the simulated provider moves the latter (docs/sandbox.md). */
export class Migration20261127160000 extends Migration {

  override name = 'Migration20261127160000';

  override up(): void | Promise<void> {
    for (const sql of addOutboxSandbox('roadside')) this.addSql(sql);
    this.addSql(`alter table "roadside"."rescues" add column "sandbox" boolean not null default false;`);
    this.addSql(`create index "rescues_sandbox_moving_index" on "roadside"."rescues" ("updated_at") where "sandbox" and "status" in ('BOOKED', 'EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE');`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "roadside"."rescues" drop column "sandbox";`);
    for (const sql of dropOutboxSandbox('roadside')) this.addSql(sql);
  }

}
