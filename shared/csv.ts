/**
 * CSV as RFC 4180 writes it: fields separated by commas, records by CRLF, a field holding a comma,
 * a double quote, CR or LF enclosed in double quotes with its double quotes doubled.
 */
export type CsvCell = string | number | null;

/**
 * A text that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, or a tab or CR before one)
 * is written with a leading `'`, which spreadsheets show as text. Only text cells: numbers are numbers.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvField(cell: CsvCell): string {
  if (cell === null) return '';
  const text = typeof cell === 'number' ? String(cell) : FORMULA_START.test(cell) ? `'${cell}` : cell;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A header record, then one record per row, each ended by CRLF. */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  return [header, ...rows].map((record) => `${record.map(csvField).join(',')}\r\n`).join('');
}
