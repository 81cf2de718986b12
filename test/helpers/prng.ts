/**
 * A seeded PRNG for property tests. The seed comes from BACKLOT_PROP_SEED when
 * set (to replay a failure), else at random; print it in the test's name.
 */

export function propSeed(): number {
  return Number(process.env.BACKLOT_PROP_SEED ?? Math.floor(Math.random() * 2 ** 31));
}

/** mulberry32: small, seeded, good enough to pick test cases. */
export function rng(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}

export type Rng = ReturnType<typeof rng>;
