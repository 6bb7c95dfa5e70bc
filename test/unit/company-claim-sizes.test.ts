import { CompanyClaimSizes, MIN_CLAIM } from '../../src/delivery/company-claim-sizes';

describe('CompanyClaimSizes', () => {
  test("a claim that reached only part way sets the company's next to twice its reach, never under the minimum; others keep the batch's share", () => {
    const sizes = new CompanyClaimSizes(100);
    sizes.note('backlog', 100, 3);
    expect(sizes.sizeOf('backlog')).toBe(6);
    sizes.note('backlog', 6, 1);
    expect(sizes.sizeOf('backlog')).toBe(MIN_CLAIM);
    sizes.note('backlog', MIN_CLAIM, 0);
    expect(sizes.sizeOf('backlog')).toBe(MIN_CLAIM);
    expect(sizes.sizeOf('quiet')).toBe(100);
    expect(sizes.limits()).toEqual({ backlog: MIN_CLAIM });
  });

  test('a claim whose last event made progress and that took all it could doubles the next, and the company is forgotten back at the full share', () => {
    const sizes = new CompanyClaimSizes(100);
    sizes.note('catching-up', 100, 10);
    expect(sizes.sizeOf('catching-up')).toBe(20);
    // Fewer were waiting than it could take: its size stays.
    sizes.note('catching-up', 12, 12);
    expect(sizes.sizeOf('catching-up')).toBe(20);
    sizes.note('catching-up', 20, 20);
    expect(sizes.sizeOf('catching-up')).toBe(40);
    sizes.note('catching-up', 40, 40);
    expect(sizes.sizeOf('catching-up')).toBe(80);
    sizes.note('catching-up', 80, 80);
    expect(sizes.sizeOf('catching-up')).toBe(100);
    expect(sizes.limits()).toEqual({});
  });

  test("an endpoint ahead of its company's slower one keeps its lead: events waiting at the claim's start do not shrink it while later ones progress", () => {
    const sizes = new CompanyClaimSizes(100);
    // 30 events wait for the slow endpoint at the claim's start; the fast one got deliveries of the 10 after them.
    sizes.note('two-speeds', 40, 40);
    expect(sizes.sizeOf('two-speeds')).toBe(100);
    // The fast endpoint reached 30 events past them, then had no room: the next claim still covers its reach twice.
    sizes.note('two-speeds', 100, 60);
    expect(sizes.sizeOf('two-speeds')).toBe(100);
    sizes.note('two-speeds', 100, 35);
    expect(sizes.sizeOf('two-speeds')).toBe(70);
  });
});
