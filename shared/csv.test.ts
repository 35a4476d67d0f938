import { describe, expect, it } from 'vitest';
import { csvField, toCsv } from './csv.ts';

describe('CSV (RFC 4180)', () => {
  it('quotes only fields holding a comma, a double quote, CR or LF, doubling the quotes', () => {
    expect(csvField('dev/echo')).toBe('dev/echo');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\r')).toBe('"cr\r"');
    expect(csvField(12.5)).toBe('12.5');
    expect(csvField(0.000001)).toBe('0.000001');
    expect(csvField(null)).toBe('');
  });

  it('writes text a spreadsheet would run as a formula as text', () => {
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('-1')).toBe("'-1");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField(-1)).toBe('-1');
  });

  it('ends every record with CRLF, the header first', () => {
    expect(
      toCsv(
        ['model', 'requests'],
        [
          ['dev/echo', 3],
          ['x,y', 0],
        ],
      ),
    ).toBe('model,requests\r\ndev/echo,3\r\n"x,y",0\r\n');
    expect(toCsv(['model'], [])).toBe('model\r\n');
  });
});
