// Paging of the Console's lists, one page at a time: "Next page" while the server says there is more,
// "First page" once past it. A page is named by what the list's endpoint takes: a cursor (agents,
// trace runs, revisions) or an offset (deployments, threads, runs, memories).
import { Button, Group, type ButtonProps } from '@mantine/core';
import { useState } from 'react';

export interface Pages<P> {
  /** The page shown: `undefined` for the first. */
  page: P | undefined;
  go: (page: P | undefined) => void;
}

/**
 * The page a list shows. A page belongs to the query (search, filters) that gave it: when `of`
 * changes the list starts at its first page again, reset while rendering (React's way of adjusting
 * state to a change) so that the old page of the new query is never asked for.
 */
export function usePages<P>(of: unknown = null): Pages<P> {
  const key = JSON.stringify(of ?? null);
  const [page, setPage] = useState<P | undefined>(undefined);
  const [pageOf, setPageOf] = useState(key);
  if (pageOf !== key) {
    setPageOf(key);
    setPage(undefined);
  }
  return { page, go: setPage };
}

/** The offset of the page after one of `limit` rows starting at `offset`; none if that page was short. */
export function nextOffset(offset: number | undefined, limit: number, rows: number): number | null {
  return rows < limit ? null : (offset ?? 0) + limit;
}

/** "First page" (past the first) and "Next page" (when `next` names one) for `pages`. */
export function PageButtons<P>({ pages, next, size }: { pages: Pages<P>; next: P | null | undefined; size?: ButtonProps['size'] }) {
  if (pages.page === undefined && (next === null || next === undefined)) return null;
  return (
    <Group gap="xs">
      {pages.page !== undefined && (
        <Button variant="default" size={size} onClick={() => pages.go(undefined)}>
          First page
        </Button>
      )}
      {next !== null && next !== undefined && (
        <Button variant="default" size={size} onClick={() => pages.go(next)}>
          Next page
        </Button>
      )}
    </Group>
  );
}

/**
 * Every row of a list paged by offset, `limit` (the most the endpoint answers) at a time, for a choice
 * that must offer them all; `page` answers the rows from an offset.
 */
export async function allRows<T>(limit: number, page: (offset: number) => Promise<T[]>): Promise<T[]> {
  const rows: T[] = [];
  for (let offset = 0; ; offset += limit) {
    const found = await page(offset);
    rows.push(...found);
    if (found.length < limit) return rows;
  }
}
