import { Migration } from '@mikro-orm/migrations';
import { createLiveEventsTrigger, dropLiveEventsTrigger } from '../../platform/webhooks/live-trigger.ts';

/** The outbox no longer announces its rows (pg_notify): the area's relay publishes them on the event bus. */
export class Migration20261127123000 extends Migration {

  override name = 'Migration20261127123000';

  override up(): void | Promise<void> {
    for (const sql of dropLiveEventsTrigger('booking')) this.addSql(sql);
  }

  override down(): void | Promise<void> {
    for (const sql of createLiveEventsTrigger('booking')) this.addSql(sql);
  }

}
