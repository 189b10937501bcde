/**
 * What the reward server and the model server share around Fastify: listening and a graceful close (stop
 * accepting, let the requests in flight finish, then close every connection), and the bearer-token check.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";

/** A built server: its Fastify app, where to listen, and a promise that resolves once no request is in flight. */
export interface Listenable {
  app: FastifyInstance;
  options: { port: number; host: string };
  idle(): Promise<void>;
}

/** The listening side of a server. */
export interface Listening {
  /** Base URL, e.g. `http://127.0.0.1:8765` (an IPv6 address in brackets). */
  url: string;
  /** Port actually bound (useful with `port: 0`). */
  port: number;
  /** Drains and stops the server, then runs `afterClose`; later calls return the same promise. */
  close(): Promise<void>;
}

/**
 * Starts `server` listening. Its close stops accepting (Fastify answers 503 to new requests and closes idle
 * keep-alive connections), waits until the requests in flight are answered, then closes every connection left: some
 * clients open spare connections that never carry a request, which Node does not count as idle, so they are closed
 * rather than waited out. `afterClose` then releases what the server held (a queue, a sandbox pool).
 */
export async function listenWithDrain(
  server: Listenable,
  afterClose: () => Promise<void> = async () => {},
): Promise<Listening> {
  await server.app.listen({ port: server.options.port, host: server.options.host });
  const address = server.app.server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    close() {
      closing ??= (async () => {
        const closed = server.app.close();
        await server.idle();
        server.app.server.closeAllConnections();
        await closed;
        await afterClose();
      })();
      return closing;
    },
  };
}

/** Constant-time comparison of `Authorization: Bearer <t>` with `token` (hashes make the lengths equal). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? "");
  if (!m) return false;
  const a = createHash("sha256").update(m[1]!.trim()).digest();
  const b = createHash("sha256").update(token).digest();
  return timingSafeEqual(a, b);
}
