/**
 * Seeded, splittable pseudo-random number generator (xoshiro128** seeded through splitmix32).
 *
 * Every random choice in rlvr (sampling, dropout, init, task generation, shuffles) takes an `Rng`, so the same
 * seed gives the same run. `split(label)` derives an independent child stream from the parent's seed and a
 * label without advancing the parent, so adding a consumer never shifts the numbers another consumer sees.
 * `state()`/`fromState()` round-trip the exact position for checkpoints.
 */

/** One step of splitmix32: a good 32-bit mixer used for seeding and hashing. */
function splitmix32(x: number): number {
  x = (x + 0x9e3779b9) | 0;
  let z = x;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** FNV-1a hash of a string, for turning split labels into seeds. */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Serializable position of an `Rng`: the seed it was made from and its four state words. */
export interface RngState {
  seed: number;
  s: [number, number, number, number];
  spare: number | null;
}

/** A seeded xoshiro128** stream. */
export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;
  /** Cached second normal from Box-Muller. */
  private spare: number | null = null;
  /** The 32-bit seed this stream was built from (used by `split`). */
  readonly seed: number;

  constructor(seed: number) {
    this.seed = seed >>> 0;
    let x = this.seed;
    x = splitmix32(x);
    this.s0 = x;
    x = splitmix32(x);
    this.s1 = x;
    x = splitmix32(x);
    this.s2 = x;
    x = splitmix32(x);
    this.s3 = x;
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** Restores a stream at the exact position captured by `state()`. */
  static fromState(state: RngState): Rng {
    const r = new Rng(state.seed);
    [r.s0, r.s1, r.s2, r.s3] = state.s;
    r.spare = state.spare;
    return r;
  }

  /** Captures the exact position of this stream. */
  state(): RngState {
    return { seed: this.seed, s: [this.s0, this.s1, this.s2, this.s3], spare: this.spare };
  }

  /** An independent child stream named by `label`; the parent does not advance. */
  split(label: string | number): Rng {
    const h = typeof label === "number" ? splitmix32(label >>> 0) : hashString(label);
    return new Rng(splitmix32(this.seed ^ splitmix32(h)));
  }

  /** Next uniformly distributed unsigned 32-bit integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform float in [0, 1) with 32 bits of randomness. */
  random(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    if (!(n > 0)) throw new RangeError(`Rng.int: n must be positive, got ${n}`);
    return Math.floor(this.random() * n);
  }

  /** Uniform integer in [lo, hi] inclusive. */
  intBetween(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /** Standard normal sample (Box-Muller, caching the second value). */
  normal(): number {
    if (this.spare !== null) {
      const v = this.spare;
      this.spare = null;
      return v;
    }
    let u = 0;
    while (u === 0) u = this.random();
    const v = this.random();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** A uniformly chosen element of a non-empty array. */
  choice<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("Rng.choice: empty array");
    return items[this.int(items.length)] as T;
  }

  /** Fisher-Yates shuffle in place; returns the same array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = items[i] as T;
      items[i] = items[j] as T;
      items[j] = tmp;
    }
    return items;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
