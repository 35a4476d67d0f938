/** The noun for `n` things: singular for one, plural otherwise ("request", "requests"). */
export const noun = (n: number, one: string, many = `${one}s`): string => (n === 1 ? one : many);

/** "1 token", "2 tokens": a number with its noun, singular or plural as English wants it. */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${noun(n, one, many)}`;
