import { describe, expect, it } from 'vitest';
import { nextLink } from './github.js';

describe('nextLink', () => {
  it('finds rel="next" among the relations GitHub sends', () => {
    const header =
      '<https://api.github.com/user/repos?page=3>; rel="next", <https://api.github.com/user/repos?page=5>; rel="last", <https://api.github.com/user/repos?page=1>; rel="first"';
    expect(nextLink(header)).toBe('https://api.github.com/user/repos?page=3');
  });

  it('accepts unquoted and multi-valued rel, in any position', () => {
    expect(nextLink('<https://h/a?page=2>; type="x"; rel=next')).toBe('https://h/a?page=2');
    expect(nextLink('<https://h/a?page=1>; rel="prev", <https://h/a?page=3>; rel="last next"')).toBe('https://h/a?page=3');
  });

  it('is undefined on the last page and without a header', () => {
    expect(nextLink('<https://h/a?page=1>; rel="first", <https://h/a?page=4>; rel="prev"')).toBeUndefined();
    expect(nextLink(null)).toBeUndefined();
    expect(nextLink('')).toBeUndefined();
  });
});
