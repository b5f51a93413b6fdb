import { Migration } from '@mikro-orm/migrations';

/** Secret generations: tokens carry the one they were issued under, so a rotation or disable revokes them exactly. */
export class Migration20261123213000 extends Migration {

  override name = 'Migration20261123213000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "platform"."clients" add column "secret_generation" int not null default 0;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "platform"."clients" drop column "secret_generation";`);
  }

}
