import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CLOSE_GRACE_MS } from '../../bin/start.ts';
import { CONFIG_VARIABLES, loadConfig } from '../../shared/config.ts';
import { nodeGet } from '../support/node-get.ts';
import { startTestStack, type TestStack } from '../support/runtime.ts';

// The Kubernetes example and the compose file against the code: probes on paths and ports the
// processes serve, a grace period longer than the drain, env names the configuration reads, a
// Service and a PodDisruptionBudget that select the Deployment's pods.

const ROOT = join(import.meta.dirname, '../..');

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef: { name: string; key: string } };
}
interface Probe {
  httpGet: { path: string; port: string | number; httpHeaders?: { name: string; value: string }[] };
}
interface Container {
  args: string[];
  ports: { name: string; containerPort: number }[];
  env: EnvVar[];
  readinessProbe: Probe;
  livenessProbe: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec: { command: string[] } } };
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  // biome-ignore lint/suspicious/noExplicitAny: each kind has its own spec; read where the kind is known.
  spec: any;
  stringData?: Record<string, string>;
}

const manifests = (file: string): Manifest[] =>
  parseAllDocuments(readFileSync(join(ROOT, 'infra/k8s', file), 'utf8')).map(
    (doc) => doc.toJSON() as Manifest,
  );
const all = ['gateway.yaml', 'runtime.yaml', 'secret.example.yaml'].flatMap(manifests);
const secret = all.find((m) => m.kind === 'Secret')!;
const deployments = all.filter((m) => m.kind === 'Deployment');
const containerOf = (deployment: Manifest): Container => deployment.spec.template.spec.containers[0];
const role = (deployment: Manifest) =>
  containerOf(deployment).args[0] === 'gateway' ? 'gateway' : 'runtime';

/** The configuration the container's env gives (secrets from the example Secret, made valid). */
function configOf(container: Container) {
  const env: Record<string, string> = { STUDIO_DATA_DIR: '/data' };
  for (const v of container.env) {
    if (v.value !== undefined) env[v.name] = v.value;
    else if (v.valueFrom) env[v.name] = validSecret(v.valueFrom.secretKeyRef.key);
  }
  return loadConfig(env);
}
const validSecret = (key: string) =>
  key === 'DATABASE_URL'
    ? secret.stringData!.DATABASE_URL!
    : key === 'STUDIO_MASTER_KEY'
      ? 'a'.repeat(64)
      : 'x'.repeat(40);

const portOf = (container: Container, port: string | number) =>
  typeof port === 'number' ? port : container.ports.find((p) => p.name === port)?.containerPort;

it('the example has a Deployment of the gateway and of the runtime', () => {
  expect(deployments.map(role).sort()).toEqual(['gateway', 'runtime']);
});

describe.each(deployments.map((d) => [d.metadata.name, d] as const))('%s', (_name, deployment) => {
  const container = containerOf(deployment);
  const config = configOf(container);
  const served = role(deployment) === 'gateway' ? config.gateway : config.runtime;

  it('reads only variables the configuration knows, its secrets from keys the Secret has', () => {
    for (const v of container.env) expect(CONFIG_VARIABLES).toContain(v.name);
    for (const v of container.env.filter((e) => e.valueFrom)) {
      expect(v.valueFrom!.secretKeyRef.name).toBe(secret.metadata.name);
      expect(Object.keys(secret.stringData!)).toContain(v.valueFrom!.secretKeyRef.key);
    }
  });

  it('probes readiness on /ready and liveness on /health, at the port the process listens on', () => {
    expect(container.readinessProbe.httpGet.path).toBe('/ready');
    expect(container.livenessProbe.httpGet.path).toBe('/health');
    for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) {
      if (probe) expect(portOf(container, probe.httpGet.port)).toBe(served.port);
    }
    expect(served.host).toBe('0.0.0.0');
  });

  it('gives a stopping pod longer than its preStop, the drain and the close after it', () => {
    const preStop = container.lifecycle?.preStop?.exec.command ?? [];
    const preStopS = preStop[0] === 'sleep' ? Number(preStop[1]) : 0;
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(
      preStopS + config.drainSeconds + CLOSE_GRACE_MS / 1000,
    );
  });

  it('is selected by its Service (on the named port) and, for the gateway, its PodDisruptionBudget', () => {
    const labels = deployment.spec.template.metadata.labels as Record<string, string>;
    expect(labels).toMatchObject(deployment.spec.selector.matchLabels);
    const service = all.find((m) => m.kind === 'Service' && m.metadata.name === deployment.metadata.name)!;
    expect(labels).toMatchObject(service.spec.selector);
    expect(container.ports.map((p) => p.name)).toContain(service.spec.ports[0].targetPort);
    const budget = all.find(
      (m) => m.kind === 'PodDisruptionBudget' && m.metadata.name === deployment.metadata.name,
    );
    if (role(deployment) === 'gateway') {
      expect(budget).toBeDefined();
      expect(labels).toMatchObject(budget!.spec.selector.matchLabels);
      expect(budget!.spec.minAvailable).toBeLessThan(deployment.spec.replicas);
    }
  });
});

describe('the probes answer on the processes', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it.each(deployments.map((d) => [d.metadata.name, d] as const))(
    '%s: every probe of the manifest is 200',
    async (_name, deployment) => {
      const container = containerOf(deployment);
      const url = role(deployment) === 'gateway' ? stack.gw.url : stack.runtime.url;
      for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) {
        if (!probe) continue;
        // With the probe's own headers (the runtime's Host check sees the kubelet's Host).
        const headers = Object.fromEntries((probe.httpGet.httpHeaders ?? []).map((h) => [h.name, h.value]));
        expect((await nodeGet(`${url}${probe.httpGet.path}`, false, headers)).status).toBe(200);
      }
    },
  );
});

describe('infra/compose.yaml', () => {
  const compose = parse(readFileSync(join(ROOT, 'infra/compose.yaml'), 'utf8'), { merge: true }) as {
    services: Record<
      string,
      {
        command?: string[];
        healthcheck?: { test: string[] };
        stop_grace_period?: string;
        environment?: Record<string, unknown>;
      }
    >;
  };
  const studios = Object.entries(compose.services).filter(([, s]) => s.command !== undefined);

  it.each(studios)(
    '%s: healthy means /ready on the port it listens on; it may drain before it is killed',
    (_name, service) => {
      const port = service.command![0] === 'gateway' ? 8600 : 8601;
      expect(service.healthcheck?.test.join(' ')).toContain(`http://127.0.0.1:${port}/ready`);
      const drainS = Number(service.environment?.STUDIO_DRAIN_S);
      expect(Number.parseInt(service.stop_grace_period ?? '10s', 10)).toBeGreaterThan(
        drainS + CLOSE_GRACE_MS / 1000,
      );
    },
  );
});
