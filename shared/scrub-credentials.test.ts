import { describe, expect, it } from 'vitest';
import { containsCredentials, scrubCredentials } from './scrub-credentials.ts';

describe('scrubCredentials', () => {
  it.each([
    ['connect to http://bot:hunter22@hooks.example/x failed', 'connect to http://***@hooks.example/x failed'],
    ['postgres://app:pa%40ss@db:5432/app', 'postgres://***@db:5432/app'],
    ['https://ghp_abcdef@github.com/o/r', 'https://***@github.com/o/r'],
    ['https://h.example/x?token=abc&page=2', 'https://h.example/x?token=***&page=2'],
    ['https://h.example/x?page=2&access_token=abc#top', 'https://h.example/x?page=2&access_token=***#top'],
    [
      'https://s3.example/o?X-Amz-Signature=f00d&X-Amz-Credential=AKIA',
      'https://s3.example/o?X-Amz-Signature=***&X-Amz-Credential=***',
    ],
    [
      'https://h.example/x?sig=1&api_key=2&client_secret=3&password=4&auth=5',
      'https://h.example/x?sig=***&api_key=***&client_secret=***&password=***&auth=***',
    ],
    ['Incorrect API key provided: sk-abc***xyz9', 'Incorrect API key provided: sk-***'],
    ['invalid_client (client_secret=s3cr3t, code=x)', 'invalid_client (client_secret=***, code=x)'],
    ['password=hunter2 rejected', 'password=*** rejected'],
  ])('%s', (text, scrubbed) => {
    expect(scrubCredentials(text)).toBe(scrubbed);
    expect(containsCredentials(text)).toBe(true);
    expect(containsCredentials(scrubbed), 'scrubbing twice changes nothing').toBe(false);
  });

  it('removes listed secrets wherever they occur, and leaves ordinary text alone', () => {
    expect(scrubCredentials('the key was hunter2-long', ['hunter2-long'])).toBe('the key was ***');
    for (const text of [
      'https://h.example/x?page=2&q=keyboards',
      'max_tokens=5000 is too many',
      'connect ECONNREFUSED 127.0.0.1:9',
      'a=b',
    ])
      expect(scrubCredentials(text)).toBe(text);
  });

  it('takes time linear in the text (long runs that almost match)', { timeout: 5_000 }, () => {
    const runs = [
      'a'.repeat(200_000),
      `?${'token'.repeat(40_000)}`,
      `http://${'u'.repeat(200_000)}`,
      '?a=b&'.repeat(40_000),
    ];
    for (const text of runs) expect(scrubCredentials(text).length).toBeGreaterThan(0);
  });
});
