import { Alert, Button, Center, Loader, Stack, Text } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Component, lazy, Suspense, useEffect, useRef, type ReactNode } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { setCsrfToken, whenSignedOut } from './api';
import { sessionQuery } from './queries';
import { pages, preload } from './routes';
import { NotFound, WithIds } from './NotFound';
import { Shell } from './Shell';
import { SignIn } from './pages/SignIn';

const Agents = lazy(pages.Agents);
const Agent = lazy(pages.Agent);
const Playground = lazy(pages.Playground);
const Memories = lazy(pages.Memories);
const Traces = lazy(pages.Traces);
const TraceRun = lazy(pages.TraceRun);
const ToolServers = lazy(pages.ToolServers);
const Deployments = lazy(pages.Deployments);
const Deployment = lazy(pages.Deployment);
const Schedules = lazy(pages.Schedules);
const Usage = lazy(pages.Usage);
const Settings = lazy(pages.Settings);

/**
 * A page that fails to render says so inside the Console's frame, with a way out; without it the
 * whole app unmounted to a blank page. The usual cause: a tab opened before the server was upgraded
 * asks for a page's chunk by its old name, which is gone.
 */
class PageError extends Component<{ children: ReactNode; path: string }, { error: Error | null }> {
  override state: { error: Error | null } = { error: null };
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  // Another page starts without the last one's error. Not a `key`: that would remount the page at
  // every URL change, and the playground stays mounted (its stream open) while a new thread's URL
  // replaces /agents/{id}/playground.
  override componentDidUpdate(previous: { path: string }) {
    if (previous.path !== this.props.path && this.state.error) this.setState({ error: null });
  }
  override render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    const chunk = /dynamically imported module|Importing a module script failed|error loading dynamically imported module/i.test(error.message);
    return <PageFailed chunk={chunk} message={error.message} />;
  }
}

/**
 * What a page that failed says. A chunk that could not be loaded is either gone (the server was
 * updated since the tab opened) or unreachable (the server is stopped or restarting): the server's
 * `/ok` tells which, and is asked again every few seconds while it does not answer, so the page says
 * when the server is back. The browser keeps a failed chunk failed: only a reload loads it again.
 */
function PageFailed({ chunk, message }: { chunk: boolean; message: string }) {
  const up = useQuery({
    queryKey: ['server-up'],
    enabled: chunk,
    retry: false,
    gcTime: 0,
    queryFn: async () => (await fetch('/ok', { cache: 'no-store' })).ok,
    refetchInterval: (q) => (q.state.status === 'error' || q.state.data === false ? 3000 : false),
  });
  const down = up.isError || up.data === false;
  const back = !down && up.failureCount === 0 && up.errorUpdateCount > 0;
  return (
    <Alert color="red" title="This page could not be shown">
      <Stack gap="xs" align="flex-start">
        <Text size="sm" className="wrap-anywhere" role="status">
          {!chunk
            ? message
            : down
              ? 'Hangar cannot be reached: the server may be stopped or restarting. This says so here once it is back.'
              : back
                ? 'Hangar is back: reload the Console to show this page.'
                : up.isPending
                  ? 'Its code could not be loaded.'
                  : 'Its code could not be loaded: the server may have been updated since this tab was opened.'}
        </Text>
        <Button size="compact-sm" variant="default" onClick={() => window.location.reload()}>
          Reload the Console
        </Button>
      </Stack>
    </Alert>
  );
}

export function useSession() {
  return useQuery(sessionQuery);
}

/** Where to go after signing in: the page that asked for it, if it is one of ours. */
function nextPath(search: string): string {
  const next = new URLSearchParams(search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/sign-in') ? next : '/agents';
}

export function App() {
  const session = useSession();
  const client = useQueryClient();
  const location = useLocation();
  // In-app navigation: the next page's chunk and data start together (the first page's were started
  // by main.tsx before the first render).
  const navigated = useRef(false);
  useEffect(() => {
    if (navigated.current) preload(client, location.pathname);
    navigated.current = true;
  }, [client, location.pathname]);
  useEffect(() => {
    whenSignedOut(() => {
      setCsrfToken(null);
      client.setQueryData(['session'], null);
    });
  }, [client]);

  if (session.isPending) {
    return (
      <Center h="100vh">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  if (!session.data) {
    if (location.pathname !== '/sign-in') return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
    return <SignIn />;
  }
  const page = (el: React.ReactNode) => (
    <PageError path={location.pathname}>
      <WithIds>
        <Suspense
          fallback={
            <Center p="xl">
              <Loader aria-label="Loading page" />
            </Center>
          }
        >
          {el}
        </Suspense>
      </WithIds>
    </PageError>
  );
  return (
    <Shell session={session.data}>
      <Routes>
        <Route path="/" element={<Navigate to="/agents" replace />} />
        <Route path="/sign-in" element={<Navigate to={nextPath(location.search)} replace />} />
        <Route path="/agents" element={page(<Agents />)} />
        <Route path="/agents/:agentId" element={page(<Agent />)} />
        <Route path="/agents/:agentId/playground" element={page(<Playground />)} />
        <Route path="/agents/:agentId/memories" element={page(<Memories />)} />
        <Route path="/threads/:threadId" element={page(<Playground />)} />
        <Route path="/traces" element={page(<Traces />)} />
        <Route path="/traces/:runId" element={page(<TraceRun />)} />
        <Route path="/tool-servers" element={page(<ToolServers />)} />
        <Route path="/deployments" element={page(<Deployments />)} />
        <Route path="/deployments/:deploymentId" element={page(<Deployment />)} />
        <Route path="/schedules" element={page(<Schedules />)} />
        <Route path="/usage" element={page(<Usage />)} />
        <Route path="/settings" element={page(<Settings />)} />
        <Route path="*" element={<NotFound />} />
      </Routes>
    </Shell>
  );
}
