/**
 * Issue 12's hostile Risk Index shape: a LINESTRING of `n` positions whose x alternates -124 / -114
 * while y steps 0.0018 from 33, so every segment crosses the state and its buffer overlaps the next.
 */
export const zigzag = (n: number) =>
  `LINESTRING(${Array.from({ length: n }, (_, i) => `${i % 2 ? -114 : -124} ${(33 + i * 0.0018).toFixed(4)}`).join(', ')})`;
