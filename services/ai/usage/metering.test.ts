import { describe, expect, it } from 'vitest';
import { chargedTokens, inputTokensAtLeast, nonBlankLength, tokensAtLeast } from './metering.ts';

describe('metering', () => {
  it('estimates four non-blank characters a token, rounded down, never none for some text', () => {
    expect(nonBlankLength(' a b\n\tc ')).toBe(3);
    expect(tokensAtLeast('')).toBe(0);
    expect(tokensAtLeast('   \n')).toBe(0);
    expect(tokensAtLeast('Hi')).toBe(1);
    expect(tokensAtLeast('Say hello world')).toBe(3);
    expect(tokensAtLeast('x'.repeat(401))).toBe(100);
  });

  it("charges the upstream's count, never below the estimate; a missing or broken count is the estimate", () => {
    expect(chargedTokens(120, 40)).toBe(120);
    expect(chargedTokens(1, 40)).toBe(40);
    expect(chargedTokens(undefined, 40)).toBe(40);
    expect(chargedTokens(null, 40)).toBe(40);
    expect(chargedTokens(Number.NaN, 40)).toBe(40);
  });

  it('reads every string a model reads, but framing and binary payloads', () => {
    const text = 'what is in this picture of the harbour';
    const withImage = [
      {
        role: 'user',
        content: [
          { type: 'text', text },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(40_000)}` } },
          { type: 'input_audio', input_audio: { data: 'B'.repeat(40_000), format: 'wav' } },
        ],
      },
    ];
    // "wav" is the one other string read: the audio's format.
    expect(inputTokensAtLeast(withImage)).toBe(tokensAtLeast(`${text}wav`));
    const tools = [{ type: 'function', function: { name: 'lookup', description: 'Looks a word up' } }];
    expect(inputTokensAtLeast(tools)).toBe(tokensAtLeast('lookupLooks a word up'));
  });
});
