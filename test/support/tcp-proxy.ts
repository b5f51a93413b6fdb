import net from 'node:net';

/**
 * A TCP proxy that can be cut (every connection dropped, new ones refused) and restored, or frozen
 * (the open connections stay open and carry nothing more, as over a link that died silently);
 * on a free loopback port unless `listen` names the address and port.
 */
export async function tcpProxy(targetHost: string, targetPort: number, listen = { host: '127.0.0.1', port: 0 }) {
  const sockets = new Set<net.Socket>();
  const pairs = new Set<[net.Socket, net.Socket]>();
  let up = true;
  const server = net.createServer((client) => {
    if (!up) { client.destroy(); return; }
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client).add(upstream);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream); pairs.delete(pair); };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(listen.port, listen.host, resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() { up = false; for (const s of sockets) s.destroy(); sockets.clear(); },
    restore() { up = true; },
    freeze() {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    close: () => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); }),
  };
}
