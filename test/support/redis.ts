import { connect } from 'node:net';

const DEFAULT_URL = 'redis://127.0.0.1:6379';

/** Why the last call to `reachableRedis` returned undefined, for skip messages. */
export let redisUnavailableReason: string | undefined;

/**
 * The Redis of `TEST_REDIS_URL` (else the local default) when one answers PING. When none does it
 * returns undefined so the caller can skip visibly, except in CI (`CI=true`), where a missing Redis
 * is an error: those suites must run there.
 */
export async function reachableRedis(): Promise<string | undefined> {
  const url = process.env.TEST_REDIS_URL || DEFAULT_URL;
  const { hostname, port } = new URL(url);
  try {
    await ping(hostname, Number(port || 6379));
    return url;
  } catch (error) {
    const reason = `Redis unreachable at ${hostname}:${port || 6379} (${(error as Error).message}); set TEST_REDIS_URL to run these tests`;
    if (process.env.CI === 'true') throw new Error(reason, { cause: error });
    redisUnavailableReason = reason;
    console.warn(`[test] skipping Redis tests: ${reason}`);
    return undefined;
  }
}

function ping(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, timeout: 2_000 });
    const fail = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    socket.on('error', fail);
    socket.on('timeout', () => fail(new Error('timeout')));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      socket.destroy();
      if (data.toString().startsWith('+PONG')) resolve();
      else reject(new Error(`answered ${JSON.stringify(data.toString().trim())}`));
    });
  });
}
