/**
 * Kubernetes' shuffle sharding (k8s.io/apiserver/pkg/util/shufflesharding): a flow's hash value deals
 * it a hand of `handSize` distinct queues out of `deckSize`, so two flows rarely share their whole
 * hand and a heavy flow cannot fill every queue a light one may use. The flow's hash is APF's
 * (apf_controller.go hashFlowID): SHA-256 of the level's name, a zero byte and the flow
 * distinguisher, its first 8 bytes little-endian.
 */
import { createHash } from 'node:crypto';

/** The most bits of a hash value a deal may consume (shufflesharding.MaxHashBits). */
export const MAX_HASH_BITS = 60;

/** Why a deck and hand size cannot deal (the library's RequiredEntropyBits check); null when they can. */
export function shuffleShardingError(deckSize: number, handSize: number): string | null {
  if (deckSize <= 0 || handSize <= 0) return `deckSize ${deckSize} or handSize ${handSize} is not positive`;
  if (handSize > deckSize) return `handSize ${handSize} is greater than deckSize ${deckSize}`;
  const bits = Math.ceil(Math.log2(deckSize) * handSize);
  if (bits > MAX_HASH_BITS)
    return `required entropy bits of deckSize ${deckSize} and handSize ${handSize} is greater than ${MAX_HASH_BITS}`;
  return null;
}

export class Dealer {
  readonly deckSize: number;
  readonly handSize: number;
  readonly #remainders: number[];

  constructor(deckSize: number, handSize: number) {
    const error = shuffleShardingError(deckSize, handSize);
    if (error !== null) throw new RangeError(error);
    this.deckSize = deckSize;
    this.handSize = handSize;
    this.#remainders = new Array<number>(handSize).fill(0);
  }

  /** The hand for `hashValue`, into `hand` (Dealer.DealIntoHand): distinct cards in [0, deckSize). */
  dealIntoHand(hashValue: bigint, hand: number[] = []): number[] {
    const remainders = this.#remainders;
    let value = hashValue;
    for (let i = 0; i < this.handSize; i++) {
      const size = BigInt(this.deckSize - i);
      const next = value / size;
      remainders[i] = Number(value - size * next);
      value = next;
    }
    hand.length = 0;
    for (let i = 0; i < this.handSize; i++) {
      let card = remainders[i]!;
      for (let j = i; j > 0; j--) if (card >= remainders[j - 1]!) card++;
      hand.push(card);
    }
    return hand;
  }
}

/** APF's hashFlowID. */
export function flowHash(levelName: string, flowDistinguisher: string): bigint {
  const sum = createHash('sha256').update(levelName).update('\0').update(flowDistinguisher).digest();
  return sum.readBigUInt64LE(0);
}
