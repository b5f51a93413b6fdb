/** What memory-probe.ts answers test/bench/memory.ts, and the split of resident memory by component. */

export interface ProbeRequest { type: 'memory'; id: number; collect: boolean }

/** One isolate's heap, bytes: `physical` is resident, `code` the part in its code spaces. */
export interface ThreadHeap { physical: number; total: number; used: number; code: number; malloced: number }

export interface MemoryReport {
  rss: number;
  main: ThreadHeap;
  /** process.memoryUsage(): memory of C++ objects bound to JavaScript objects, and of ArrayBuffers (part of the native heap). */
  external: number;
  arrayBuffers: number;
  /** Main isolate: bytecode and its metadata. */
  bytecode: number;
  /** The main isolate's heap spaces, bytes. */
  spaces: Record<string, { size: number; used: number; physical: number }>;
  workers: ThreadHeap[];
  /** Module source the main thread loaded, by package, largest first. */
  modules: { name: string; files: number; bytes: number }[];
  /** Resident bytes of /proc/self/smaps by kind of mapping (the anonymous rest left out); `wasmMemories` each memory's. */
  mappings: { wasmMemory: number; wasmMemories: number[]; executable: number; nodeBinary: number; libraries: number; otherFiles: number };
}

export const MiB = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

/** The resident memory of one report by component, MiB, each with what it holds; they add up to the RSS. */
export function components(r: MemoryReport): { component: string; MiB: number; note: string }[] {
  const workerHeaps = r.workers.reduce((n, w) => n + w.physical, 0);
  const heapCode = r.main.code + r.workers.reduce((n, w) => n + w.code, 0);
  // V8's code spaces are executable mappings too: the rest of those is WebAssembly's compiled code.
  const wasmCode = Math.max(0, r.mappings.executable - heapCode);
  const rows = [
    { component: `WebAssembly memories (${r.mappings.wasmMemories.length})`, bytes: r.mappings.wasmMemory,
      // PGlite's, on its own thread (pglite-thread.ts): /proc/self/smaps holds every thread's mappings.
      note: `resident ${r.mappings.wasmMemories.map(MiB).join(' + ')} MiB` },
    { component: 'main isolate V8 heap', bytes: r.main.physical,
      note: `used ${MiB(r.main.used)} / total ${MiB(r.main.total)} MiB; code spaces ${MiB(r.main.code)} MiB; bytecode ${MiB(r.bytecode)} MiB; `
        + Object.entries(r.spaces).filter(([, s]) => s.physical >= 1024 ** 2).map(([name, s]) => `${name} ${MiB(s.used)} / ${MiB(s.physical)}`).join(', ') },
    // Idle piscina workers cannot be asked to collect: their figures are never after a GC.
    { component: `worker threads' V8 heaps (${r.workers.length})`, bytes: workerHeaps,
      note: r.workers.map((w) => `used ${MiB(w.used)} / total ${MiB(w.total)} MiB`).join('; ') || 'none' },
    { component: 'WebAssembly compiled code (and other JIT code)', bytes: wasmCode, note: 'executable anonymous mappings outside the V8 heaps' },
    { component: 'node binary (resident pages)', bytes: r.mappings.nodeBinary, note: 'code and read-only data of the executable' },
    { component: 'shared libraries and other mapped files', bytes: r.mappings.libraries + r.mappings.otherFiles, note: '' },
  ];
  const named = rows.reduce((n, row) => n + row.bytes, 0);
  rows.push({ component: 'rest: native heap (malloc), thread stacks, V8 outside the heap', bytes: r.rss - named,
    note: `of which ArrayBuffers ${MiB(r.arrayBuffers)} MiB, external ${MiB(r.external)} MiB, V8 malloced ${MiB(r.main.malloced)} MiB` });
  return [...rows.map(({ component, bytes, note }) => ({ component, MiB: MiB(bytes), note })), { component: 'RSS', MiB: MiB(r.rss), note: '' }];
}
