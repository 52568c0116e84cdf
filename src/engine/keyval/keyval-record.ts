/** One keyval entry as a zone holds it. */
export interface KeyvalRecord {
  readonly value: string;
  /** Same clock as the `nowMs` lookups are made with; `null` never expires. */
  readonly expireAtMs: number | null;
}
