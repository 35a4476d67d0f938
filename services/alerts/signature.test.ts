import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signatureOf } from './signature.ts';

describe('webhook signatures', () => {
  it('are v1= and the hex HMAC-SHA256 of "<timestamp>.<body>"', () => {
    const body = '{"id":"e1"}';
    const expected = createHmac('sha256', 'shh').update(`1700000000.${body}`).digest('hex');
    expect(signatureOf('shh', 1_700_000_000, body)).toBe(`v1=${expected}`);
    expect(signatureOf('shh', 1_700_000_001, body)).not.toBe(`v1=${expected}`);
    expect(signatureOf('other', 1_700_000_000, body)).not.toBe(`v1=${expected}`);
  });

  it('secrets made for the admin are long and never the same', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newWebhookSecret()).not.toBe(a);
  });
});
