import type { Connection } from '@mikro-orm/core';
import { vi } from 'vitest';

/**
 * Watches an area's connection in 300 ms windows, for up to a minute, until one holds nothing but a
 * poller's statements (at least 3): its probes, or its heavier `work` (a claim, a round). Work still
 * under way (a job's last chunk, a relay's transaction) makes a window not count. Returns that
 * window's work and whether a transaction began in it: what an idle poller's test asserts on.
 */
export async function pollerWindow(
  connection: Connection, isProbe: (sql: string) => boolean, isWork: (sql: string, params?: unknown[]) => boolean,
) {
  const execute = vi.spyOn(connection, 'execute');
  const begin = vi.spyOn(connection, 'begin');
  try {
    for (const end = Date.now() + 60_000; ;) {
      execute.mockClear();
      begin.mockClear();
      await new Promise((r) => setTimeout(r, 300));
      const calls = execute.mock.calls.map(([sql, params]) => ({ sql: String(sql), work: isWork(String(sql), params as unknown[]) }));
      if (calls.length >= 3 && calls.every(({ sql, work }) => work || isProbe(sql))) {
        return { work: calls.filter(({ work }) => work).map(({ sql }) => sql), began: begin.mock.calls.length > 0 };
      }
      if (Date.now() > end) throw new Error('the poller never ran alone for 300 ms');
    }
  } finally {
    execute.mockRestore();
    begin.mockRestore();
  }
}
