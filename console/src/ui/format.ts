/** Dollars as a price list shows them: cents at least, micro-dollars when that is all there is. */
export const formatUsd = (usd: number) =>
  usd.toLocaleString('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: 2,
    maximumFractionDigits: 6,
  });

export const formatWhen = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '–');
