import { Migration } from '@mikro-orm/migrations';

/** The GraphQL IDE's public client id at a trusted issuer, and the name its sign-in button shows (issue 43). */
export class Migration20261127160500 extends Migration {

  override name = 'Migration20261127160500';

  override up(): void | Promise<void> {
    this.addSql(`alter table "platform"."issuers" add column "ide_client_id" varchar(255) null, add column "ide_name" varchar(100) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "platform"."issuers" drop column "ide_client_id", drop column "ide_name";`);
  }

}
