import { describe, expect, it } from 'vitest';
import { vectorsOf } from '../../shared/search/terms';

const doc = (kind: string, side: string | null, tsv: string) => ({ conversation_id: 'c1', kind, side, tsv });

describe('conversation vectors', () => {
  it('keep each word once per kind of text, weighted, counted up to 4 texts', () => {
    const [vectors] = vectorsOf(
      ['c1'],
      [
        doc('title', null, "'refund':1"),
        ...Array.from({ length: 6 }, () => doc('message', 'visitor', "'refund':2 'late':1")),
        doc('message', 'operator', "'refund':1"),
        doc('message', null, "'system':1"),
        doc('note', null, "'secret':1"),
      ],
    );
    expect(vectors?.tsv).toBe("'refund':1A,21C,22C,23C,24C,31 'late':21C,22C,23C,24C 'system':11B");
    expect(vectors?.note_tsv).toBe("'secret':1");
  });

  it('pair adjacent words of one text only, notes apart', () => {
    const [vectors] = vectorsOf(
      ['c1', 'c2'],
      [
        doc('message', 'visitor', "'my':1 'track':2 'number':3"),
        doc('message', 'visitor', "'lost':1 'the':2 'track':3"),
        doc('message', 'operator', "'number':1 'nine':2"),
        doc('note', null, "'call':1 'back':2"),
      ],
    );
    expect(vectors?.phrase_tsv.match(/'(?:[^']|'')*':\S+/g)?.sort()).toEqual(
      [
        "'lost the':21C",
        "'my track':21C",
        "'number nine':31",
        "'the track':21C",
        "'track number':21C",
      ].sort(),
    );
    expect(vectors?.note_phrase_tsv).toBe("'call back':1");
  });

  it('quote what tsvector quotes, and give a conversation without texts empty vectors', () => {
    const [first, second] = vectorsOf(['c1', 'c2'], [doc('message', 'visitor', "'it''s':1 'a\\\\b':2")]);
    expect(first?.tsv).toBe("'it''s':21C 'a\\\\b':21C");
    expect(first?.phrase_tsv).toBe("'it''s a\\\\b':21C");
    expect(second).toEqual({
      conversation_id: 'c2',
      tsv: '',
      note_tsv: '',
      phrase_tsv: '',
      note_phrase_tsv: '',
    });
  });
});
