/** Memory figures of the service benches: where a process's RSS settles, robust to when V8 collects. */

/**
 * A process's RSS floor in each quarter of a run: its lowest sample, i.e. just after V8's last major GC there. RSS
 * is a sawtooth (old-generation garbage piles up until a mark-compact, which V8 defers for tens of thousands of
 * items), so window means move with where the collections fall; a leak shows as floors that keep rising.
 */
export function rssFloors(rss: readonly { done: number; mb: number }[], total: number): number[] {
  return [0, 1, 2, 3].map((q) => {
    const inQ = rss.filter((s) => s.done >= (q * total) / 4 && s.done <= ((q + 1) * total) / 4).map((s) => s.mb);
    return inQ.length ? Math.min(...inQ) : NaN;
  });
}
