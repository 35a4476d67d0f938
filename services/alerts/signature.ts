import { createHmac, randomBytes } from 'node:crypto';

/** The scheme's version, the prefix of `x-studio-signature`. */
export const SIGNATURE_VERSION = 'v1';

/** `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">` keyed with the webhook's secret (see README, "Alerts"). */
export function signatureOf(secret: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `${SIGNATURE_VERSION}=${mac}`;
}

/** A webhook secret made for an admin who gave none: `whsec_` and 32 random bytes. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;
