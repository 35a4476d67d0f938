import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Plugin } from '../../services/runtime/plugins/types.ts';
import { type RunningRuntime, startRuntime } from '../../services/runtime/runtime.ts';
import { loadConfig } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';
import { type ApiResponse, startTestGateway, type TestGateway, type TestGatewayOptions } from './gateway.ts';

export interface TestStack {
  gw: TestGateway;
  runtime: RunningRuntime;
  /** The user token the runtime calls the gateway with. */
  token: string;
  workspace: string;
  /** The runtime's log lines (captured when `runtimeLogLevel` is given). */
  runtimeLogs: string[];
  /** A request to the runtime over real HTTP. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
  close(): Promise<void>;
}

export interface TestStackOptions {
  gateway?: Partial<TestGatewayOptions>;
  /** Env the runtime (and its plugins) see. */
  runtimeEnv?: Record<string, string | undefined>;
  plugins?: Plugin[];
  /** Extra configuration variables of the runtime (e.g. STUDIO_AGENT_MODEL, STUDIO_RUNTIME_TOKEN). */
  config?: Record<string, string>;
  /** LOG_LEVEL of the runtime, whose lines go to `runtimeLogs`. Default silent. */
  runtimeLogLevel?: 'error' | 'warn' | 'info' | 'debug' | 'trace';
}

/** A real gateway (memory store) and a runtime on the same log, both on loopback with free ports. */
export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const gw = await startTestGateway({ store: 'memory', logLevel: 'silent', ...options.gateway });
  const dataDir = await mkdtemp(join(tmpdir(), 'studio-runtime-'));
  try {
    await gw.api('POST', '/v1/studios/create', {
      token: gw.adminKey,
      body: { name: 'Runtime', studio_id: 'runtime' },
    });
    const token = (
      await gw.api('POST', '/v1/studios/tokens/apply', { token: gw.adminKey, body: { studio_id: 'runtime' } })
    ).json.user_token as string;
    const config = loadConfig({
      STUDIO_DATA_DIR: dataDir,
      STUDIO_EVENT_STORE: 'memory',
      STUDIO_RUNTIME_PORT: '0',
      LOG_LEVEL: 'silent',
      ...options.config,
    });
    const runtimeLogs: string[] = [];
    const runtime = await startRuntime({
      config,
      logger: createLogger(options.runtimeLogLevel ?? 'silent', {
        write: (line: string) => void runtimeLogs.push(line),
      }),
      gatewayUrl: gw.url,
      token,
      store: { events: gw.running.ctx.events, checkpoints: gw.running.ctx.checkpoints },
      processEnv: options.runtimeEnv ?? {},
      plugins: options.plugins ?? [],
      sdkRoutes: true,
    });
    return {
      gw,
      runtime,
      token,
      workspace: config.workspace,
      runtimeLogs,
      async call(method, path, body, headers = {}) {
        const res = await fetch(`${runtime.url}${path}`, {
          method,
          headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
          body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        });
        const text = await res.text();
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        return { status: res.status, headers: res.headers, json, text };
      },
      async close() {
        await runtime.close();
        await gw.close();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await gw.close();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}
