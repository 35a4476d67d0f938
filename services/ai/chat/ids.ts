import { randomBytes } from 'node:crypto';

export const completionId = () => `chatcmpl-${randomBytes(12).toString('base64url')}`;
export const nowSeconds = () => Math.floor(Date.now() / 1000);
