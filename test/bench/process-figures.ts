/** Figures of a gateway child process (test/support/child-server.ts) as the benchmarks read them. */
import { readdir, readFile } from 'node:fs/promises';

/** The gateway's own figures from its /metrics at `base`. */
export async function processFigures(base: string) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? NaN);
  return { rss: value('process_resident_memory_bytes'), heap: value('nodejs_heap_size_used_bytes'), cpuSeconds: value('process_cpu_seconds_total') };
}

/**
 * A full garbage collection in the gateway through its inspector (started with --inspect on
 * loopback), so that the heap figure is what it holds, not garbage not yet collected.
 */
export async function collectGarbage(inspectPort: number) {
  const [target] = await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json() as { webSocketDebuggerUrl: string }[];
  const socket = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => { socket.onopen = resolve; socket.onerror = reject; });
  const collected = new Promise((resolve) => { socket.onmessage = (message) => { if (JSON.parse(String(message.data)).id === 1) resolve(undefined); }; });
  socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
  await collected;
  // A second pass: what the first freed may only be finalised (weak references, sockets' buffers) by then.
  const again = new Promise((resolve) => { socket.onmessage = (message) => { if (JSON.parse(String(message.data)).id === 2) resolve(undefined); }; });
  socket.send(JSON.stringify({ id: 2, method: 'HeapProfiler.collectGarbage' }));
  await again;
  socket.close();
}

/**
 * CPU seconds a process on this machine has used in its threads (the garbage collector's and
 * workers' included), nanosecond counts from /proc (Linux). Reading them costs the process nothing,
 * unlike its /metrics, whose default metrics list every open handle (tens of ms with 1,000 sockets).
 */
export async function cpuSecondsOf(pid: number) {
  const threads = await readdir(`/proc/${pid}/task`);
  const ns = await Promise.all(threads.map(async (thread) => {
    const stat = await readFile(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').catch(() => '0');
    return Number(stat.split(' ')[0]);
  }));
  return ns.reduce((sum, n) => sum + n, 0) / 1e9;
}
