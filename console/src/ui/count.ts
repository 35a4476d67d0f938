/** "1 token", "2 tokens": a number with its noun, singular or plural as English wants it. */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
