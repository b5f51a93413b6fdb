import { Migration } from '@mikro-orm/migrations';

/**
 * Replays authorised: the scopes of the token that ran each key's request, and the `withheld` state
 * (the answer carried a secret, never kept). Rows stored before have no scopes: they get their
 * client's (no token of it can hold more), or every scope when the client is gone, so an old answer
 * is replayed only to a token that may run its request.
 */
export class Migration20261127092257 extends Migration {

  override name = 'Migration20261127092257';

  override up(): void | Promise<void> {
    this.addSql(`alter table "platform"."idempotency_keys" drop constraint "idempotency_keys_state_check";`);
    this.addSql(`alter table "platform"."idempotency_keys" add "scopes" text[] null;`);
    this.addSql(`update "platform"."idempotency_keys" k set "scopes" = c."scopes" from "platform"."clients" c where c."client_id" = k."client_id";`);
    this.addSql(`update "platform"."idempotency_keys" set "scopes" = '{b2b,roadside,admin}' where "scopes" is null;`);
    this.addSql(`alter table "platform"."idempotency_keys" alter column "scopes" set not null;`);
    this.addSql(`alter table "platform"."idempotency_keys" add constraint "idempotency_keys_state_check" check ("state" in ('in_progress', 'done', 'withheld'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "platform"."idempotency_keys" drop constraint "idempotency_keys_state_check";`);
    this.addSql(`delete from "platform"."idempotency_keys" where "state" = 'withheld';`);
    this.addSql(`alter table "platform"."idempotency_keys" drop column "scopes";`);
    this.addSql(`alter table "platform"."idempotency_keys" add constraint "idempotency_keys_state_check" check ("state" in ('in_progress', 'done'));`);
  }

}
