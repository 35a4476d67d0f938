import { adminOk } from '../../support/admin.ts';
import type { TestGateway } from '../../support/gateway.ts';

// biome-ignore lint/suspicious/noExplicitAny: audit items as JSON, checked by the tests that read them.
export type AuditItem = { type: string; stream: string; actor: string; data: any };

/** Every event in the log, as the audit route shows it. */
export async function auditLog(gw: TestGateway): Promise<{ items: AuditItem[]; text: string }> {
  const items: AuditItem[] = [];
  let text = '';
  let after = 0;
  for (;;) {
    const res = await adminOk(gw, 'GET', `/v1/audit/events?after=${after}&limit=1000`);
    items.push(...res.json.items);
    text += res.text;
    if (res.json.next_after === null) return { items, text };
    after = res.json.next_after;
  }
}

/** The encodings a careless implementation might store a secret in. */
export function encodings(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [
    secret,
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
    bytes.toString('hex'),
  ];
}

/** The labels of the secrets found in `haystack`, in any of their encodings. */
export function secretsIn(haystack: string, secrets: Record<string, string>): string[] {
  return Object.entries(secrets)
    .filter(([, value]) => encodings(value).some((encoded) => haystack.includes(encoded)))
    .map(([label]) => label);
}
