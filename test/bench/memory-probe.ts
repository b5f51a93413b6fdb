/**
 * Preloaded by test/bench/memory.ts only (`node --expose-gc --import ./test/bench/memory-probe.ts
 * <npm start's arguments>`), never by `npm start`: it answers the bench's IPC message `memory` (the
 * channel exists only when the bench forks the server) with the process's memory by component. No
 * port is opened. Worker threads load it too (they inherit the preload): there it does nothing.
 */
import { readFileSync, statSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { isMainThread } from 'node:worker_threads';
import type { MemoryReport, ProbeRequest, ThreadHeap } from './memory-report.ts';

const gc = (globalThis as { gc?: () => void }).gc;

/** Every module file the main thread loaded. */
const loaded = new Set<string>();

/** Loaded source by package (the project's own files as `(project)`), largest first. */
function modules() {
  const packages = new Map<string, { files: number; bytes: number }>();
  for (const url of loaded) {
    if (!url.startsWith('file:')) continue;
    const path = fileURLToPath(url);
    const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? '(project)';
    const entry = packages.get(name) ?? { files: 0, bytes: 0 };
    entry.files += 1;
    entry.bytes += statSync(path, { throwIfNoEntry: false })?.size ?? 0;
    packages.set(name, entry);
  }
  return [...packages].map(([name, p]) => ({ name, ...p })).sort((a, b) => b.bytes - a.bytes);
}

function mainHeap(): ThreadHeap {
  const h = v8.getHeapStatistics();
  const code = v8.getHeapSpaceStatistics().filter((s) => s.space_name.startsWith('code')).reduce((n, s) => n + s.physical_space_size, 0);
  return { physical: h.total_physical_size, total: h.total_heap_size, used: h.used_heap_size, code, malloced: h.malloced_memory };
}

interface ReportHeap { totalMemory: number; totalCommittedMemory: number; usedMemory: number; executableMemory: number; mallocedMemory: number }

/**
 * Each worker thread's heap, from Node's diagnostic report (it interrupts the threads: piscina's idle
 * workers sleep in Atomics.wait and read no message). Not collected first: nothing can ask them to.
 */
const workerHeaps = (): ThreadHeap[] => (process.report.getReport() as { workers: { javascriptHeap: ReportHeap }[] }).workers.map(({ javascriptHeap: h }) => ({
  physical: h.totalCommittedMemory, total: h.totalMemory, used: h.usedMemory, code: h.executableMemory, malloced: h.mallocedMemory,
}));

/**
 * Resident bytes of /proc/self/smaps by kind of mapping. A 32-bit WebAssembly memory is its
 * accessible part followed by the rest of its reserved 8 GiB (V8 on 64-bit), inaccessible.
 */
function mappings() {
  const kinds = { wasmMemory: 0, wasmMemories: [] as number[], executable: 0, nodeBinary: 0, libraries: 0, otherFiles: 0 };
  const all: { start: bigint; end: bigint; perms: string; path: string; rss: number }[] = [];
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) all.push({ start: BigInt(`0x${header[1]}`), end: BigInt(`0x${header[2]}`), perms: header[3], path: header[4], rss: 0 });
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) all[all.length - 1].rss = Number(rss[1]) * 1024;
  }
  all.forEach((m, i) => {
    const next = all[i + 1];
    const reservation = next && !next.path && next.perms === '---p' && next.start === m.end && next.end - next.start >= 4n * 1024n ** 3n;
    if (!m.path && m.perms.startsWith('rw') && reservation) { kinds.wasmMemory += m.rss; kinds.wasmMemories.push(m.rss); }
    else if (m.path.endsWith('/node')) kinds.nodeBinary += m.rss;
    else if (/\.so(\.|$)/.test(m.path)) kinds.libraries += m.rss;
    else if (m.path.startsWith('/')) kinds.otherFiles += m.rss;
    else if (m.perms.includes('x')) kinds.executable += m.rss;
  });
  return kinds;
}

function report(collect: boolean): MemoryReport {
  if (collect) gc?.();
  const usage = process.memoryUsage();
  const code = v8.getHeapCodeStatistics();
  return {
    rss: usage.rss, main: mainHeap(), external: usage.external, arrayBuffers: usage.arrayBuffers,
    bytecode: code.bytecode_and_metadata_size,
    spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size, physical: s.physical_space_size }])),
    workers: workerHeaps(), modules: modules(), mappings: mappings(),
  };
}

if (isMainThread) {
  registerHooks({
    resolve(specifier, context, next) {
      const resolved = next(specifier, context);
      loaded.add(resolved.url);
      return resolved;
    },
  });
  process.on('message', (message: ProbeRequest) => {
    if (message?.type === 'memory') process.send?.({ type: 'memory', id: message.id, report: report(message.collect) });
  });
  // The IPC channel must not keep a stopping server alive.
  process.channel?.unref();
}
