import { Migration } from '@mikro-orm/migrations';
import { addOutboxSandbox, dropOutboxSandbox } from '../../platform/webhooks/outbox.ts';

/** Outbox rows say whether a sandbox organisation recorded them (docs/sandbox.md). */
export class Migration20261127160000 extends Migration {

  override name = 'Migration20261127160000';

  override up(): void | Promise<void> {
    for (const sql of addOutboxSandbox('scoring')) this.addSql(sql);
  }

  override down(): void | Promise<void> {
    for (const sql of dropOutboxSandbox('scoring')) this.addSql(sql);
  }

}
