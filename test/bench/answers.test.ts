import { describe, expect, it } from 'vitest';
import { firstDifference } from './answers.ts';

describe('firstDifference', () => {
  it('finds none between equal answers, whatever the order of object keys', () => {
    const answer = { data: { user: { userId: 'u1', bookings: { nodes: [{ bookingId: 'b1', vehicle: { vin: 'V1' } }, { bookingId: 'b2', vehicle: null }] } } } };
    expect(firstDifference(answer, structuredClone(answer))).toBeNull();
    expect(firstDifference({ data: { a: 1, b: [true, 'x'] } }, { data: { b: [true, 'x'], a: 1 } })).toBeNull();
  });

  it('names the path of the first difference and both values', () => {
    const ours = { data: { user: { userId: 'u1', bookings: { nodes: [{ vehicle: { vin: 'V1' } }, { vehicle: { vin: 'V2' } }] } } } };
    const theirs = structuredClone(ours);
    theirs.data.user.bookings.nodes[1].vehicle.vin = 'V9';
    expect(firstDifference(ours, theirs)).toBe('$.data.user.bookings.nodes[1].vehicle.vin: "V2" vs "V9"');
  });

  it('tells a missing field, a missing array element, null against a value, and an error list one side only', () => {
    expect(firstDifference({ data: { a: 1, b: 2 } }, { data: { a: 1 } })).toBe('$.data.b: 2 vs absent');
    expect(firstDifference({ list: [1, 2] }, { list: [1, 2, 3] })).toBe('$.list[2]: absent vs 3');
    expect(firstDifference({ data: { user: null } }, { data: { user: { userId: 'u1' } } })).toBe('$.data.user: null vs {"userId":"u1"}');
    expect(firstDifference({ data: { user: null } }, { data: { user: null }, errors: [{ message: 'no' }] })).toBe('$.errors: absent vs [{"message":"no"}]');
    expect(firstDifference({ list: [] }, { list: {} })).toBe('$.list: [] vs {}');
    expect(firstDifference('1', 1)).toBe('$: "1" vs 1');
  });
});
