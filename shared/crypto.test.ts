import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { looksLikeUserToken, newUserToken, parseMasterKey, SecretBox, sha256Hex } from './crypto.ts';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('round-trips and never shows the plaintext', () => {
    const sealed = box.encrypt('sk-live-123456');
    expect(sealed).not.toContain('sk-live');
    expect(box.decrypt(sealed)).toBe('sk-live-123456');
  });

  it('seals the same value differently each time', () => {
    expect(box.encrypt('x')).not.toBe(box.encrypt('x'));
  });

  it('refuses a tampered value and another key', () => {
    const sealed = box.encrypt('secret');
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0] = body[0]! ^ 1;
    expect(() => box.decrypt([...parts.slice(0, 3), body.toString('base64url')].join('.'))).toThrow();
    expect(() => new SecretBox(randomBytes(32)).decrypt(sealed)).toThrow();
  });

  it('mac: keyed by the master key and the purpose, stable for one key, never the plain SHA-256', () => {
    const digest = box.mac('email', 'ada@example.com');
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(box.mac('email', 'ada@example.com')).toBe(digest);
    expect(digest).not.toBe(sha256Hex('ada@example.com'));
    expect(box.mac('code', 'ada@example.com')).not.toBe(digest);
    expect(new SecretBox(randomBytes(32)).mac('email', 'ada@example.com')).not.toBe(digest);
  });
});

describe('sha256Hex', () => {
  it('is SHA-256 in lowercase hex, of the UTF-8 bytes of its text', () => {
    // FIPS 180-2's test vector, and a text beyond ASCII against its UTF-8 bytes.
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('é')).toBe(createHash('sha256').update(Buffer.from('é', 'utf8')).digest('hex'));
  });
});

describe('keys and tokens', () => {
  it('user tokens are stk_ + 43 base64url characters', () => {
    const token = newUserToken();
    expect(token).toMatch(/^stk_[A-Za-z0-9_-]{43}$/);
    expect(looksLikeUserToken(token)).toBe(true);
  });

  it('master keys are 64 hex or base64 of 32 bytes, nothing else', () => {
    const key = randomBytes(32);
    expect(parseMasterKey(key.toString('hex'))).toEqual(key);
    expect(parseMasterKey(key.toString('base64'))).toEqual(key);
    expect(() => parseMasterKey('too short')).toThrow(/STUDIO_MASTER_KEY/);
  });
});
