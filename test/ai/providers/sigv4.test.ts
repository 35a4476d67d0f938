import { describe, expect, it } from 'vitest';
import { signRequest } from '../../../services/ai/providers/bedrock/sign.ts';

// AWS's SigV4 test suite (aws-sig-v4-test-suite, 2015-08-30): its credentials, region, service and
// date, and the Authorization headers it publishes, signed with the function the Bedrock calls use.

const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};
const SESSION_TOKEN =
  'AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==';
const SCOPE = 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request';
const DATE = new Date('2015-08-30T12:36:00Z');

const sign = (
  method: 'GET' | 'POST',
  url: string,
  extra: {
    headers?: Record<string, string>;
    body?: string;
    sessionToken?: string;
    unsignedHeaders?: string[];
  } = {},
) =>
  signRequest({
    method,
    url: new URL(url),
    headers: extra.headers ?? {},
    ...(extra.body === undefined ? {} : { body: extra.body }),
    region: 'us-east-1',
    service: 'service',
    credentials: { ...CREDENTIALS, ...(extra.sessionToken ? { sessionToken: extra.sessionToken } : {}) },
    date: DATE,
    ...(extra.unsignedHeaders ? { unsignedHeaders: extra.unsignedHeaders } : {}),
  });

describe('SigV4, against AWS published test suite', () => {
  it('get-vanilla', async () => {
    const headers = await sign('GET', 'https://example.amazonaws.com/');
    expect(headers.authorization).toBe(
      `${SCOPE}, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31`,
    );
    expect(headers).toMatchObject({ host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z' });
    expect(headers).not.toHaveProperty('x-amz-security-token');
    expect(headers).not.toHaveProperty('x-amz-content-sha256');
  });

  it('get-vanilla-query-order-key-case: query parameters sorted by name, case first', async () => {
    const headers = await sign('GET', 'https://example.amazonaws.com/?Param2=value2&Param1=value1');
    expect(headers.authorization).toBe(
      `${SCOPE}, SignedHeaders=host;x-amz-date, Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500`,
    );
  });

  it('post-vanilla', async () => {
    const headers = await sign('POST', 'https://example.amazonaws.com/');
    expect(headers.authorization).toBe(
      `${SCOPE}, SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b`,
    );
  });

  it('post-x-www-form-urlencoded: the content type is signed, the body hashed in', async () => {
    const headers = await sign('POST', 'https://example.amazonaws.com/', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'Param1=value1',
    });
    expect(headers.authorization).toBe(
      `${SCOPE}, SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a`,
    );
    expect(headers['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it('post-sts-header-before: a session token is sent and signed (as the Bedrock calls do)', async () => {
    const headers = await sign('POST', 'https://example.amazonaws.com/', { sessionToken: SESSION_TOKEN });
    expect(headers.authorization).toBe(
      `${SCOPE}, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead`,
    );
    expect(headers['x-amz-security-token']).toBe(SESSION_TOKEN);
  });

  it('post-sts-header-after: a session token sent but left out of the signature', async () => {
    const headers = await sign('POST', 'https://example.amazonaws.com/', {
      sessionToken: SESSION_TOKEN,
      unsignedHeaders: ['x-amz-security-token'],
    });
    expect(headers.authorization).toBe(
      `${SCOPE}, SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b`,
    );
    expect(headers['x-amz-security-token']).toBe(SESSION_TOKEN);
  });

  it('a host with a port is signed with its port, as it goes on the wire', async () => {
    const withPort = await sign('GET', 'http://127.0.0.1:8123/');
    expect(withPort.host).toBe('127.0.0.1:8123');
    const other = await sign('GET', 'http://127.0.0.1:8124/');
    expect(withPort.authorization).not.toBe(other.authorization);
  });
});
