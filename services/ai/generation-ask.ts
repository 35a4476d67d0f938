/** What a generation may consume, known before its upstream call: what budgets and limits weigh. */
export interface GenerationAsk {
  /** At least as many tokens as the model will read: the UTF-8 bytes of its input text. */
  inputTokensAtMost: number;
  /**
   * The gateway's low estimate of the tokens the model reads (`inputTokensAtLeast`): what the
   * generation is charged at least, whatever its upstream reports.
   */
  inputTokensAtLeast: number;
  /** The output cap the client asked for (`max_tokens`), if it asked. */
  maxOutputTokens?: number;
  images?: number;
  audioSeconds?: number;
  videoSeconds?: number;
}

/** An upper bound on the tokens of a text: a token is at least one UTF-8 byte. */
export const tokensAtMost = (...texts: string[]) =>
  texts.reduce((sum, text) => sum + Buffer.byteLength(text, 'utf8'), 0);
