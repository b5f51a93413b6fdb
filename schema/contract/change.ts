/** One contract change that can break a partner: a kind (what happened) and a location (where). */
export interface BreakingChange { kind: string; location: string; message: string }

/** The CHANGELOG.md line that acknowledges a breaking change; a reason may follow after ` — `. */
export const acknowledgement = (change: BreakingChange) => `- BREAKING: ${change.kind} ${change.location}`;
