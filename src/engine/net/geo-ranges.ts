/**
 * geo's `ranges` table as ngx_http_geo_module builds it: per upper 16 bits of an IPv4 address, the
 * ranges of the lower 16 bits in order. A range that spans several /16s is cut at each boundary. A
 * range added inside one already there splits it (the new one wins where they meet), one at either
 * end shifts it, the same range again replaces its value (a warning), and any other overlap is an
 * error; `delete` removes only exact ranges, /16 by /16. A lookup takes the first range of its /16
 * that holds the address.
 */

/** One range within a /16: `high` is the upper 16 bits, `start`..`end` the lower ones. */
export interface GeoRangePiece {
  readonly high: number;
  readonly start: number;
  readonly end: number;
  readonly value: string;
}

interface Range {
  start: number;
  end: number;
  value: string;
}

/** What adding a range did: nothing to say, replaced a value, or could not (nginx's messages). */
export type AddOutcome =
  | { readonly kind: 'added' }
  | { readonly kind: 'duplicate'; readonly old: string }
  | { readonly kind: 'overlaps'; readonly range: string };

export class GeoRanges {
  readonly #low = new Map<number, Range[]>();

  static of(pieces: readonly GeoRangePiece[]): GeoRanges {
    const table = new GeoRanges();
    for (const piece of pieces) {
      const list = table.#list(piece.high);
      list.push({ start: piece.start, end: piece.end, value: piece.value });
    }
    return table;
  }

  /** ngx_http_geo_add_range, with `start` and `end` as unsigned 32-bit addresses. */
  add(start: number, end: number, value: string): AddOutcome {
    let outcome: AddOutcome = { kind: 'added' };
    for (let n = start; n <= end; n = ((n + 0x10000) & 0xffff0000) >>> 0) {
      const high = n >>> 16;
      let s = n === start ? n & 0xffff : 0;
      let e = (n | 0xffff) >>> 0 > end ? end & 0xffff : 0xffff;
      const range = this.#list(high);
      let placed = false;
      for (let i = range.length - 1; i >= 0 && !placed; i--) {
        const r = range[i]!;
        if (e < r.start) continue;
        placed = true;
        if (s > r.end) range.splice(i + 1, 0, { start: s, end: e, value });
        else if (s === r.start && e === r.end) {
          outcome = { kind: 'duplicate', old: r.value };
          r.value = value;
        } else if (s > r.start && e < r.end) {
          range.splice(i + 1, 0, { start: s, end: e, value }, { start: e + 1, end: r.end, value: r.value });
          r.end = s - 1;
        } else if (s === r.start && e < r.end) {
          range.splice(i, 0, { start: s, end: e, value });
          range[i + 1]!.start = e + 1;
        } else if (s > r.start && e === r.end) {
          range.splice(i + 1, 0, { start: s, end: e, value });
          r.end = s - 1;
        } else {
          s = r.start;
          e = r.end;
          const h = `${high >>> 8}.${high & 0xff}`;
          return { kind: 'overlaps', range: `${h}.${s >>> 8}.${s & 0xff}-${h}.${e >>> 8}.${e & 0xff}` };
        }
      }
      if (!placed) range.unshift({ start: s, end: e, value });
      if (high === 0xffff) break;
    }
    return outcome;
  }

  /** ngx_http_geo_delete_range: false (nginx's warning) when some /16 of it held no exact range. */
  delete(start: number, end: number): boolean {
    let all = true;
    for (let n = start; n <= end; n = ((n + 0x10000) & 0xffff0000) >>> 0) {
      const high = n >>> 16;
      const s = n === start ? n & 0xffff : 0;
      const e = (n | 0xffff) >>> 0 > end ? end & 0xffff : 0xffff;
      const range = this.#low.get(high) ?? [];
      const at = range.findIndex((r) => r.start === s && r.end === e);
      if (at === -1) all = false;
      else range.splice(at, 1);
      if (high === 0xffff) break;
    }
    return all;
  }

  /** The value for an unsigned 32-bit address, or undefined (the default applies). */
  lookup(addr: number): string | undefined {
    const range = this.#low.get(addr >>> 16);
    if (range === undefined) return undefined;
    const n = addr & 0xffff;
    for (const r of range) if (n >= r.start && n <= r.end) return r.value;
    return undefined;
  }

  /** The table as pieces, to carry in a configuration and rebuild with {@link of}. */
  pieces(): GeoRangePiece[] {
    const out: GeoRangePiece[] = [];
    for (const [high, range] of this.#low) for (const r of range) out.push({ high, ...r });
    return out;
  }

  #list(high: number): Range[] {
    let range = this.#low.get(high);
    if (range === undefined) {
      range = [];
      this.#low.set(high, range);
    }
    return range;
  }
}
