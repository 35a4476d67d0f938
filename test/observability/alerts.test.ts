import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

const ALERTS = join(import.meta.dirname, '..', '..', 'infra', 'prometheus', 'alerts.yaml');

/** A Prometheus rule file as far as this one uses it. */
const RuleFile = z.strictObject({
  groups: z.array(
    z.strictObject({
      name: z.string(),
      rules: z.array(
        z.strictObject({
          alert: z.string().regex(/^[A-Z][A-Za-z0-9]+$/),
          expr: z.string().min(1),
          for: z
            .string()
            .regex(/^\d+[smh]$/)
            .optional(),
          labels: z.strictObject({ severity: z.enum(['info', 'warning', 'critical']) }),
          annotations: z.strictObject({ summary: z.string(), description: z.string().optional() }),
        }),
      ),
    }),
  ),
});

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
});
afterAll(async () => {
  await gw?.close();
});

/** Every metric a scrape names (its HELP lines: a labelled metric not yet observed has no sample). */
async function metricNames(): Promise<Set<string>> {
  const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.adminKey}` } });
  const text = await res.text();
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

describe('infra/prometheus/alerts.yaml', () => {
  it('is a rule file whose every alert names only metrics the gateway serves', async () => {
    const file = RuleFile.parse(parse(await readFile(ALERTS, 'utf8')));
    const rules = file.groups.flatMap((group) => group.rules);
    expect(rules.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining(['StudioReadModelLagging', 'StudioUpstreamErrorRate', 'StudioBudgetRefusals']),
    );
    const served = await metricNames();
    for (const rule of rules) {
      const named = [...rule.expr.matchAll(/\bstudio_[a-z0-9_]+/g)].map((match) => match[0]);
      expect(named.length, rule.alert).toBeGreaterThan(0);
      for (const name of named) expect(served, `${rule.alert}: ${name}`).toContain(name);
    }
  });
});
