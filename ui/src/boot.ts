// The first script the page runs, before the app's entry (React, Mantine, the router, …) has been
// evaluated: on a cold load it starts "who am I", the page's chunk and the page's first data side by
// side, so they travel while the entry is compiled and run. main.tsx renders with this QueryClient.
import { QueryClient } from '@tanstack/react-query';
import { sessionQuery } from './queries';
import { preload } from './routes';

export const queries = new QueryClient({
  // Data fetched in the last 2 s is fresh: a page mounting right after its data was started does
  // not ask again (invalidated queries are refetched regardless).
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 2_000 } },
});
void queries.prefetchQuery(sessionQuery);
preload(queries, window.location.pathname);
