/**
 * Hosts on one machine: each a Linux network namespace with an address of its own on a bridge in
 * the root namespace (a small LAN, no IP forwarding needed), so processes in different hosts reach
 * each other only over that network, as separate machines do. Needs root and iproute2.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ip = (...args: string[]) => run('ip', args);
/** Every name starts with it and the creating process's pid, so a crashed run's leftovers can be told apart and removed. */
const PREFIX = 'frgmh';

export interface HostProcess {
  child: ChildProcess;
  /** stdout so far. */
  stdout(): string;
  /** stdout and stderr so far. */
  output(): string;
  exited: Promise<number | null>;
  /** Sends `signal` (SIGTERM by default), waits up to 15 s, then SIGKILL. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface Host {
  name: string;
  namespace: string;
  /** Its address on the LAN. */
  address: string;
  /** Runs `node <args>` inside this host, with `env` over the test's environment. */
  node(args: string[], env: Record<string, string>): HostProcess;
  /** Runs another program inside this host (a nats-server), with `env` over the test's environment. */
  run(command: string, args: string[], env?: Record<string, string>): HostProcess;
  /** Unplugs (false) or plugs back (true) its cable: its processes keep running, unreachable. */
  plug(connected: boolean): Promise<void>;
}

export interface Lan {
  /** The root namespace's address on the LAN: where services of the machine itself (PostgreSQL, Redis) can be forwarded. */
  address: string;
  hosts: Record<string, Host>;
  /** Removes the namespaces (with their veths) and the bridge. */
  close(): Promise<void>;
}

/** Why namespaces cannot be made here (not root, no iproute2, refused by the kernel), or null when they can. */
export async function namespacesUnavailable(): Promise<string | null> {
  if (process.getuid?.() !== 0) return 'not running as root';
  const probe = `${PREFIX}-${process.pid}-probe`;
  try {
    await ip('netns', 'add', probe);
    await ip('netns', 'del', probe);
    return null;
  } catch (error) {
    return `\`ip netns add\` failed: ${(error as Error).message.split('\n')[0]}`;
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Removes namespaces, the processes still running in them, and links left by runs whose process is gone (a crash, a kill -9). */
export async function removeLeftovers() {
  const { stdout: namespaces } = await ip('netns', 'list');
  for (const [, name, pid] of namespaces.matchAll(new RegExp(`^(${PREFIX}-(\\d+)-\\S+)`, 'gm'))) {
    if (alive(Number(pid))) continue;
    const { stdout: orphans } = await ip('netns', 'pids', name!).catch(() => ({ stdout: '' }));
    for (const orphan of orphans.split('\n').filter(Boolean)) {
      try {
        process.kill(Number(orphan), 'SIGKILL');
      } catch { /* gone meanwhile */ }
    }
    await ip('netns', 'del', name!).catch(() => undefined);
  }
  const { stdout: links } = await ip('-o', 'link', 'show');
  for (const [, name, pid] of links.matchAll(new RegExp(`^\\d+: ((?:${PREFIX}|fmh)(\\d+)\\w*)[@:]`, 'gm'))) {
    if (!alive(Number(pid))) await ip('link', 'del', name!).catch(() => undefined);
  }
}

function startProcess(namespace: string, command: string, args: string[], env: Record<string, string>): HostProcess {
  const child = spawn('ip', ['netns', 'exec', namespace, command, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); output += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child, exited, stdout: () => stdout, output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** One namespace per name on a /24 of its own (from the pid, so parallel runs do not collide), the root namespace at .1. */
export async function createLan(names: string[]): Promise<Lan> {
  const id = process.pid;
  const subnet = `10.${100 + (id % 100)}.${Math.floor(id / 100) % 256}`;
  const bridge = `${PREFIX}${id}`;
  const hosts: Record<string, Host> = {};
  const veths: string[] = [];
  // The veths too: a namespace (and the veth in it) outlives its deletion while the kernel still holds a socket of it.
  const close = async () => {
    for (const host of Object.values(hosts)) await ip('netns', 'del', host.namespace).catch(() => undefined);
    for (const veth of veths) await ip('link', 'del', veth).catch(() => undefined);
    await ip('link', 'del', bridge).catch(() => undefined);
  };
  try {
    await ip('link', 'add', bridge, 'type', 'bridge');
    await ip('addr', 'add', `${subnet}.1/24`, 'dev', bridge);
    await ip('link', 'set', bridge, 'up');
    for (const [i, name] of names.entries()) {
      const namespace = `${PREFIX}-${id}-${name}`;
      const address = `${subnet}.${i + 2}`;
      const outside = `fmh${id}v${i}`;
      const inside = `fmh${id}p${i}`;
      await ip('netns', 'add', namespace);
      hosts[name] = {
        name, namespace, address,
        node: (args, env) => startProcess(namespace, process.execPath, args, env),
        run: (command, args, env = {}) => startProcess(namespace, command, args, env),
        plug: async (connected) => { await ip('link', 'set', outside, connected ? 'up' : 'down'); },
      };
      await ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
      veths.push(outside);
      await ip('link', 'set', outside, 'master', bridge);
      await ip('link', 'set', outside, 'up');
      await ip('link', 'set', inside, 'netns', namespace);
      await ip('-n', namespace, 'link', 'set', 'lo', 'up');
      await ip('-n', namespace, 'link', 'set', inside, 'name', 'eth0');
      await ip('-n', namespace, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
      await ip('-n', namespace, 'link', 'set', 'eth0', 'up');
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { address: `${subnet}.1`, hosts, close };
}
