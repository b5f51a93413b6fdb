import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { FormattedExecutionResult } from 'graphql';
import type { Counter } from 'prom-client';
import { callerKey } from '../../subgraphs/platform/auth/caller-key.ts';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import type { CommittedEvent } from '../../subgraphs/platform/events/bus.ts';
import { AppError } from '../../subgraphs/platform/errors.ts';
import { isUnauthenticated, type SubscriberAuth } from './auth.ts';
import type { ExecutionBudget } from './budget.ts';
import type { Channel } from './channel.ts';
import { CloseCode } from './close-codes.ts';
import { PendingEvents, type NextEvent } from './coalesce.ts';
import type { PreparedSubscription } from './document.ts';
import type { Holder, ExecuteQuery, Transport } from './engine.ts';
import type { ExecutionSlots } from './execution-slots.ts';
import { withEvent, type EventNamed } from './event-extension.ts';
import { turn } from '../../subgraphs/platform/lanes.ts';

/** One subscription sharing an execution: where its results go, and the events it had not yet joined for. */
export interface Member {
  holder: Holder;
  channel: Channel<FormattedExecutionResult>;
  /** Events the execution had received when the subscription joined: those are not its to receive. */
  since: number;
  /** Set while its history is replayed (engine.ts): live results wait here, then those not replayed go. */
  held?: FormattedExecutionResult[];
  /**
   * Set when resumed after an event: the live events of its source up to `seq` (the anchor, then each
   * event replayed) are not pushed again, however late one reaches this process.
   */
  fence?: { source: string; seq: number };
}

/** An event as a shared execution runs it: live, or replayed from the history (without its resource). */
type RunEvent = EventNamed & Pick<CommittedEvent, 'source' | 'seq'>;

const fenced = ({ fence }: Member, { source, seq }: RunEvent) => fence?.source === source && seq <= fence.seq;

/** What every shared execution of an engine uses. */
export interface SharedExecutionContext {
  execute: ExecuteQuery;
  auth: SubscriberAuth;
  budget: ExecutionBudget;
  slots: ExecutionSlots;
  close(holder: Holder, code: number, reason: string): void;
  metrics: { pushed: Counter<'transport'>; executions: Counter };
  log: FastifyBaseLogger;
}

/**
 * Subscriptions that share their executions: the same field, document (as run), operation and
 * variables, asked by the same identity (client, organisation, scopes, end user). The query runs as
 * that identity and nothing else of a subscriber's enters it, so its result is every member's. A
 * digest: the key holds no caller's data and is as long whatever the document.
 */
export function shareKeyOf(prepared: PreparedSubscription, caller: Caller): string {
  const identity = [caller.clientId, caller.orgId, [...caller.scopes].sort(), caller.userId ?? null];
  const { fieldName, responseKey, query, operationName, variables } = prepared;
  return createHash('sha256').update(JSON.stringify([identity, fieldName, responseKey, query, operationName ?? null, variables])).digest('base64url');
}

/**
 * One execution per event for every member, in event order, one event at a time. Each execution is
 * charged to the identity's client (SUBSCRIPTIONS_EXECUTIONS_PER_MINUTE) before it runs; past the
 * budget the events waiting are coalesced until it allows one more, and that one result, the
 * entity's latest state, names the latest event with how many it covers. Each member's token is
 * checked again before the execution; a member whose check fails is closed (4401) or sent an error,
 * and does not hold back the others.
 */
export class SharedExecution {
  readonly members = new Set<Member>();
  readonly pending = new PendingEvents();
  readonly prepared: PreparedSubscription;
  readonly caller: Caller;
  private running = false;
  private readonly context: SharedExecutionContext;

  constructor(prepared: PreparedSubscription, caller: Caller, context: SharedExecutionContext) {
    this.prepared = prepared;
    this.caller = caller;
    this.context = context;
  }

  /** Whether the event concerns these subscriptions: the identity's organisation, a type the field runs on. */
  concerns(event: CommittedEvent) {
    return this.caller.orgId === event.orgId && this.prepared.field.events.includes(event.type);
  }

  join(holder: Holder, channel: Channel<FormattedExecutionResult>): Member {
    const member = { holder, channel, since: this.pending.count };
    this.members.add(member);
    return member;
  }

  /** Runs the events waiting until none is left or no member is; a call while it runs returns at once. */
  async run() {
    if (this.running) return;
    this.running = true;
    try {
      while (this.pending.length && this.members.size) {
        const wait = await this.context.budget.charge(callerKey(this.caller));
        if (wait) {
          this.pending.coalesce();
          await sleep(wait, undefined, { ref: false });
          continue;
        }
        const next = this.pending.take()!;
        await this.context.slots.run(() => this.runOne(next));
      }
    } finally {
      this.running = false;
    }
  }

  private async runOne(next: NextEvent) {
    const members = [...this.members].filter((m) => m.since < next.order && !fenced(m, next.event));
    await this.execute(await this.checked(members, next.event), next.event, next.covers);
  }

  /** Runs one replayed event for one member alone, straight to its channel, charged like any other. */
  async replay(member: Member, event: RunEvent) {
    const { budget, slots } = this.context;
    for (let wait = await budget.charge(callerKey(this.caller)); wait; wait = await budget.charge(callerKey(this.caller))) {
      await sleep(wait, undefined, { ref: false });
    }
    await slots.run(async () => this.execute(await this.checked([member], event, true), event, 1, true));
  }

  /** Runs the query once for `members`; `direct` pushes past a member's held results (replay's own). */
  private async execute(members: Member[], event: RunEvent, covers: number, direct = false) {
    const { execute, log, metrics } = this.context;
    if (!members.length) return;
    metrics.executions.inc();
    try {
      const result = await execute(this.prepared, members[0]!.holder.subscriber);
      const refused = result.errors?.find((e) => e.extensions?.code === 'UNAUTHENTICATED');
      if (refused) return this.closeAll(members, refused.message);
      // Null without errors: not (or no longer) this organisation's entity. Nothing to push.
      if (!result.errors && result.data?.[this.prepared.responseKey] == null) return;
      // Serialising and sending a large result on a turn of its own, after its execution's last piece.
      await turn();
      this.push(members, withEvent(result, event, covers > 1 ? covers : undefined), event, direct);
    } catch (error) {
      if (isUnauthenticated(error)) return this.closeAll(members, (error as Error).message);
      log.error({ err: { type: (error as Error).name, message: (error as Error).message } }, 'a subscription event failed');
      this.push(members, this.failed(error, event), event, direct);
    }
  }

  /**
   * The members whose token passed its check again; the others are closed (4401) or sent an error.
   * Members presenting the same token (a screen's tabs, one client's many sockets) share one check:
   * its verdict is the token's, whoever holds it.
   */
  private async checked(members: Member[], event: RunEvent, direct = false): Promise<Member[]> {
    const { auth, close, log } = this.context;
    const byToken = Map.groupBy(members, (member) => member.holder.subscriber.authorization);
    const passed = await Promise.all([...byToken.values()].map((holding) => auth.recheck(holding[0]!.holder.subscriber).then(() => holding, (error: unknown) => {
      for (const member of holding) {
        if (isUnauthenticated(error)) close(member.holder, CloseCode.Unauthorized, `Unauthorized: ${(error as Error).message}`);
        else this.push([member], this.failed(error, event), event, direct);
      }
      if (!isUnauthenticated(error)) log.error({ err: { type: (error as Error).name, message: (error as Error).message } }, 'a subscription event failed');
      return [];
    })));
    return passed.flat().filter((m) => !m.channel.closed);
  }

  private failed(error: unknown, event: EventNamed): FormattedExecutionResult {
    const code = error instanceof AppError ? error.code : 'INTERNAL_SERVER_ERROR';
    return withEvent({ errors: [{ message: 'This event could not be run; later events will be', extensions: { code } }] }, event);
  }

  /**
   * `direct`: a replayed result. A live one is held while its member's replay runs, and dropped once the
   * member is fenced past its event: the replay may have run it, and ended, while it ran live.
   */
  private push(members: Member[], result: FormattedExecutionResult, event: RunEvent, direct = false) {
    const pushed = new Map<Transport, number>();
    for (const member of members) {
      const { channel, holder, held } = member;
      if (channel.closed || (!direct && fenced(member, event))) continue;
      if (held && !direct) {
        held.push(result);
        continue;
      }
      channel.push(result);
      pushed.set(holder.transport, (pushed.get(holder.transport) ?? 0) + 1);
    }
    for (const [transport, n] of pushed) this.context.metrics.pushed.inc({ transport }, n);
  }

  private closeAll(members: Member[], message: string) {
    for (const { holder } of members) this.context.close(holder, CloseCode.Unauthorized, `Unauthorized: ${message}`);
  }
}
