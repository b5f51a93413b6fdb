/**
 * Issue 44: docker-compose.yml as an operator runs it, checked without Docker (./files.ts reads it as
 * compose does) against the configuration schema: every setting reaches the services from .env, the
 * topology's own values are valid, only the gateway is published and on loopback by default, and the
 * services get longer than a drain to stop.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { configVariables, loadConfig, subgraphUrlVariable } from '../../subgraphs/platform/config.ts';
import { composeFile, durationMs, interpolate, ownServices, ROOT } from './files.ts';

/** What compose fixes for its topology, over .env; docs/deployment.md's compose section names each. */
const TOPOLOGY = ['NODE_ENV', 'HOST', 'PORT', 'DATABASE_URL', 'REDIS_URL', 'NATS_URL', 'DATA_DIR'];
/** Private keys compose withholds from the subgraphs whatever .env holds (the gateway takes them back from .env). */
const WITHHELD = ['JWT_PRIVATE_KEY', 'JWT_PUBLIC_KEY', 'INTERNAL_TOKEN_PRIVATE_KEY'];
const GATEWAY_ONLY = ['METRICS_PORT', ...Object.keys(subgraphDefinitions).map(subgraphUrlVariable)];
const HOP_KEY = 'compose-test-hop-key-0123456789abcdef';
const services = ownServices();

const envFiles = (files: string | (string | { path: string })[] | undefined) =>
  [files ?? []].flat().map((f) => (typeof f === 'string' ? f : f.path));
const environmentOf = (name: string, env: Record<string, string> = { INTERNAL_HOP_KEY: HOP_KEY }) =>
  Object.fromEntries(Object.entries(composeFile().services[name].environment ?? {}).map(([k, v]) => [k, interpolate(String(v), env)]));

describe('docker-compose.yml and the configuration schema', () => {
  it('runs the gateway and one service per subgraph from the image', () => {
    expect(services.map(([name]) => name).sort()).toEqual([...Object.keys(subgraphDefinitions), 'gateway'].sort());
  });

  it('passes .env to every service, so that each variable of the schema can be set there', () => {
    for (const [name, service] of services) {
      expect(envFiles(service.env_file), name).toContain('.env');
      const fixed = Object.entries(service.environment ?? {}).filter(([, value]) => !String(value).startsWith('${')).map(([key]) => key);
      const allowed = name === 'gateway' ? [...TOPOLOGY, ...GATEWAY_ONLY] : [...TOPOLOGY, ...WITHHELD];
      // Anything else the schema reads comes from .env as the operator wrote it.
      expect(fixed.filter((key) => !allowed.includes(key)), `${name} fixes what the operator should set`).toEqual([]);
    }
    expect([...TOPOLOGY, 'METRICS_PORT'].filter((key) => !configVariables.includes(key))).toEqual([]);
  });

  it('gives each service values the schema accepts, metrics off the public port', () => {
    for (const [name] of services) {
      const config = loadConfig(environmentOf(name));
      expect(config.HOST, name).toBe('0.0.0.0');
      expect(config.DATABASE_URL, name).toMatch(/^postgres:\/\/.*@postgres:5432\//);
      expect(config.REDIS_URL, name).toBe('redis://redis:6379');
      expect(config.NATS_URL, name).toBe('nats://nats:4222');
    }
    const gateway = loadConfig(environmentOf('gateway'));
    expect(gateway.METRICS_PORT).toBeDefined();
    expect(gateway.METRICS_PORT).not.toBe(gateway.PORT);
    for (const subgraph of Object.keys(subgraphDefinitions)) {
      expect(environmentOf('gateway')[subgraphUrlVariable(subgraph)]).toBe(`http://${subgraph}:${loadConfig(environmentOf(subgraph)).PORT}/graphql`);
    }
  });

  it('gives the subgraphs no private key from .env, and the gateway every key .env holds', () => {
    const keys = { INTERNAL_HOP_KEY: HOP_KEY, JWT_PRIVATE_KEY: 'jwt-private', JWT_PUBLIC_KEY: 'jwt-public', INTERNAL_TOKEN_PRIVATE_KEY: 'internal-private' };
    for (const [name] of services) {
      const environment = environmentOf(name, keys);
      for (const key of WITHHELD) expect(environment[key], `${name} ${key}`).toBe(name === 'gateway' ? keys[key as keyof typeof keys] : '');
    }
    // Without them in .env: unset for the gateway too (it generates them under DATA_DIR), not the literal text.
    expect(WITHHELD.map((key) => environmentOf('gateway')[key])).toEqual(['', '', '']);
  });

  it('runs nats-server 2.9 with JetStream on a volume, which every service waits for', () => {
    const { services: all, volumes } = composeFile() as { services: Record<string, { image?: string; command?: string[]; volumes?: string[]; depends_on?: Record<string, unknown> }>; volumes: Record<string, unknown> };
    const nats = all.nats!;
    expect(nats.image).toMatch(/^nats:2\.9(-alpine)?$/);
    expect(nats.command).toEqual(expect.arrayContaining(['-js', '-sd', '/data']));
    expect(nats.volumes).toEqual(['natsdata:/data']);
    expect(Object.keys(volumes)).toContain('natsdata');
    for (const [name] of services) expect(Object.keys(all[name]!.depends_on ?? {}), name).toContain('nats');
  });

  it('refuses to start without INTERNAL_HOP_KEY, naming the command that makes one', () => {
    expect(() => environmentOf('booking', {})).toThrow(/INTERNAL_HOP_KEY.*npm run keys/);
  });

  it('publishes the gateway alone, on 127.0.0.1 unless GATEWAY_BIND says otherwise, and never the metrics port', () => {
    const published = Object.entries(composeFile().services).filter(([, s]) => s.ports?.length);
    expect(published.map(([name]) => name)).toEqual(['gateway']);
    const [port] = published[0][1].ports!;
    const gateway = loadConfig(environmentOf('gateway'));
    expect(interpolate(port, {})).toBe(`127.0.0.1:4000:${gateway.PORT}`);
    expect(interpolate(port, { GATEWAY_BIND: '0.0.0.0', GATEWAY_PORT: '8080' })).toBe(`0.0.0.0:8080:${gateway.PORT}`);
    expect(interpolate(port, {}).split(':').at(-1)).not.toBe(String(gateway.METRICS_PORT));
  });

  it('gives every service longer to stop than a drain can take', () => {
    // Webhook attempts in flight, then requests in flight (the gateway gives up on a subgraph after
    // SUBGRAPH_TIMEOUT_MS; Apollo's drain closes every connection after 10 s), then the database.
    const defaults = loadConfig({});
    const drainBound = defaults.WEBHOOK_TIMEOUT_MS + Math.max(defaults.SUBGRAPH_TIMEOUT_MS, 10_000);
    for (const [name, service] of services) {
      expect(durationMs(service.stop_grace_period ?? '10s'), name).toBeGreaterThan(drainBound);
    }
  });

  it('is documented: docs/deployment.md names the variables compose fixes and the ports it opens', () => {
    const page = readFileSync(join(ROOT, 'docs', 'deployment.md'), 'utf8');
    const section = page.slice(page.indexOf('## Docker compose'), page.indexOf('\n## ', page.indexOf('## Docker compose') + 1));
    for (const name of [...TOPOLOGY, 'METRICS_PORT', 'GATEWAY_BIND', 'GATEWAY_PORT', '127.0.0.1', String(loadConfig(environmentOf('gateway')).METRICS_PORT)]) {
      expect(section, name).toContain(name);
    }
  });
});
