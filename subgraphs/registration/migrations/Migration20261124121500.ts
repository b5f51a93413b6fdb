import { Migration } from '@mikro-orm/migrations';
import { createLiveEventsTrigger, dropLiveEventsTrigger } from '../../platform/webhooks/live-trigger.ts';

/** Each outbox row announces itself on commit, for live events on PostgreSQL. */
export class Migration20261124121500 extends Migration {

  override name = 'Migration20261124121500';

  override up(): void | Promise<void> {
    for (const sql of createLiveEventsTrigger('registration')) this.addSql(sql);
  }

  override down(): void | Promise<void> {
    for (const sql of dropLiveEventsTrigger('registration')) this.addSql(sql);
  }

}
