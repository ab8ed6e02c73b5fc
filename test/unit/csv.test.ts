import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CSV_EOL, csvCell, csvRow, neutralizeFormula, StreamedCell } from '../../shared/exports/csv';

/** The CSV writer, read back by csv-parse (RFC 4180): what goes in comes out, formulas made inert. */
const readBack = (text: string): string[][] => parse(text) as string[][];

describe('csvCell', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['+SUM(A1)', "'+SUM(A1)"],
    ['-2+3', "'-2+3"],
    ['@cmd', "'@cmd"],
    ['\tTAB', "'\tTAB"],
    ['\rCR', '"\'\rCR"'],
    ['\nLF', '"\'\nLF"'],
    ['=HYPERLINK("x")', '"\'=HYPERLINK(""x"")"'],
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['', ''],
  ])('writes %j as %j', (value, written) => {
    expect(csvCell(value)).toBe(written);
  });

  it('writes numbers, booleans and null as they are (numbers are not formulas)', () => {
    expect(csvRow([-1, 0, true, null, undefined])).toBe(`-1,0,true,,${CSV_EOL}`);
  });

  it('round-trips any text through csv-parse, formula starts prefixed with a quote', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 6 }), (cells) => {
        const [row] = readBack(csvRow(cells));
        expect(row).toEqual(cells.map(neutralizeFormula));
      }),
      { numRuns: 500 },
    );
  });
});

describe('StreamedCell', () => {
  it('writes one quoted cell in pieces, equal to the cell written whole', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { maxLength: 6 }), (pieces) => {
        const cell = new StreamedCell();
        const text = `x,${cell.open()}${pieces.map((piece) => cell.piece(piece)).join('')}${cell.close()}${CSV_EOL}`;
        const [row] = readBack(text);
        expect(row).toEqual(['x', neutralizeFormula(pieces.join(''))]);
      }),
      { numRuns: 300 },
    );
  });
});
