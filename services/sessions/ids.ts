import { randomBytes } from 'node:crypto';

export const newSessionId = () => `ses_${randomBytes(12).toString('base64url')}`;
export const newTurnId = () => `turn_${randomBytes(12).toString('base64url')}`;
