import type { FastifyReply } from 'fastify';

/**
 * The RateLimit header fields of draft-ietf-httpapi-ratelimit-headers-10: each answer that counted
 * against a limit names the quota policies that counted it (`RateLimit-Policy`, one list member per
 * policy: `"client";q=1200;w=60`) and where the caller stands in each (`RateLimit`:
 * `"client";r=1187;t=42`). Both are RFC 8941 lists of items whose value is the policy's name as a
 * string; names are constants of this module, so no escaping is needed.
 */
export interface QuotaPolicy {
  /** `[a-z-]+`: the list item's string. */
  readonly name: 'client' | 'issuer' | 'token-address' | 'token-client';
  /** Requests (failed attempts, for the token policies) allowed in one window: `q`. */
  readonly quota: number;
  /** The window's length in seconds: `w`. */
  readonly windowSeconds: number;
}

/** Where the caller stands in one policy after this request. */
export interface LimitState {
  readonly policy: QuotaPolicy;
  /** What is left of the quota in this window: `r`. */
  readonly remaining: number;
  /** Seconds until the window ends and the quota is whole again: `t`. */
  readonly resetSeconds: number;
}

/** Every limit the gateway keeps counts in fixed one-minute windows. */
export const WINDOW_SECONDS = 60;

export const perMinute = (name: QuotaPolicy['name'], quota: number): QuotaPolicy =>
  ({ name, quota, windowSeconds: WINDOW_SECONDS });

/** A state from a counter's answer: points left and milliseconds before its window ends. */
export const stateOf = (policy: QuotaPolicy, remaining: number, msBeforeReset: number): LimitState => ({
  policy,
  remaining: Math.max(0, Math.min(policy.quota, remaining)),
  resetSeconds: Math.max(0, Math.ceil(msBeforeReset / 1000)),
});

const policyMember = ({ name, quota, windowSeconds }: QuotaPolicy) =>
  `"${name}";q=${quota};w=${windowSeconds}`;
const stateMember = ({ policy, remaining, resetSeconds }: LimitState) =>
  `"${policy.name}";r=${remaining};t=${resetSeconds}`;

/** Sets both fields on an answer from the states of the policies that counted it (none: nothing is set). */
export function setLimitFields(reply: FastifyReply, states: readonly LimitState[]) {
  if (!states.length) return;
  reply.header('RateLimit-Policy', states.map((s) => policyMember(s.policy)).join(', '));
  reply.header('RateLimit', states.map(stateMember).join(', '));
}
