/**
 * APF's nominal concurrency: each limited priority level gets
 * `ceil(total × shares / Σ shares)` seats (apf_controller.go, computeNominalConcurrencyLimit), the sum
 * over every limited level (exempt ones take none).
 */
export function nominalSeats(totalSeats: number, shares: number, sumShares: number): number {
  if (sumShares <= 0) return 0;
  return Math.ceil((totalSeats * shares) / sumShares);
}
