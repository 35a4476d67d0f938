/**
 * Where the KurrentDB contract suite runs: the server of `KURRENTDB_URL` when it is set, otherwise a
 * throwaway container started with testcontainers 11.x when that package is installed and a Docker
 * engine answers. Otherwise nothing runs and the reason says why, for the skip title: the suite is
 * then reported as not run, never as passed.
 */

export interface KurrentDbForTests {
  /** Connection string of the server to test against; undefined when there is none. */
  url?: string;
  /** Why there is no server (for the skip title). */
  reason?: string;
  stop(): Promise<void>;
}

/** The few testcontainers 11.x calls used here (the package is optional, so typed by hand). */
interface StartedContainer {
  getHost(): string;
  getMappedPort(port: number): number;
  stop(): Promise<unknown>;
}
interface ContainerBuilder {
  withEnvironment(environment: Record<string, string>): ContainerBuilder;
  withExposedPorts(...ports: number[]): ContainerBuilder;
  withWaitStrategy(strategy: unknown): ContainerBuilder;
  withStartupTimeout(ms: number): ContainerBuilder;
  start(): Promise<StartedContainer>;
}
interface Testcontainers {
  GenericContainer: new (image: string) => ContainerBuilder;
  Wait: { forHttp(path: string, port: number): { forStatusCode(code: number): unknown } };
}

const DEFAULT_IMAGE = 'docker.kurrent.io/kurrent-latest/kurrentdb:latest';
const PORT = 2113;

export async function kurrentDbForTests(): Promise<KurrentDbForTests> {
  const url = process.env.KURRENTDB_URL;
  if (url) return { url, stop: async () => {} };

  let testcontainers: Testcontainers;
  try {
    // Not a dependency of this repository: a variable specifier keeps the type checker and the
    // bundler from resolving it, so the suite still loads where it is not installed.
    const specifier = 'testcontainers';
    testcontainers = (await import(/* @vite-ignore */ specifier)) as Testcontainers;
  } catch {
    return skipped('KURRENTDB_URL is not set and testcontainers is not installed');
  }
  const image = process.env.KURRENTDB_IMAGE || DEFAULT_IMAGE;
  try {
    const container = await new testcontainers.GenericContainer(image)
      .withEnvironment({
        KURRENTDB_INSECURE: 'true',
        KURRENTDB_RUN_PROJECTIONS: 'None',
        KURRENTDB_MEM_DB: 'true',
      })
      .withExposedPorts(PORT)
      .withWaitStrategy(testcontainers.Wait.forHttp('/health/live', PORT).forStatusCode(204))
      .withStartupTimeout(120_000)
      .start();
    return {
      url: `kurrentdb://${container.getHost()}:${container.getMappedPort(PORT)}?tls=false`,
      stop: async () => {
        await container.stop();
      },
    };
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return skipped(`KURRENTDB_URL is not set and no container could start (${message})`);
  }
}

function skipped(reason: string): KurrentDbForTests {
  console.warn(`[test] not running the KurrentDB contract suite: ${reason}`);
  return { reason, stop: async () => {} };
}
