import { Center, Loader } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { fetchSession, setCsrfToken, whenSignedOut } from './api';
import { Shell } from './Shell';
import { SignIn } from './pages/SignIn';

// Every page but sign-in is its own chunk: the first load carries only what it shows.
const Agents = lazy(() => import('./pages/Agents'));
const Agent = lazy(() => import('./pages/Agent'));
const Playground = lazy(() => import('./pages/Playground'));
const Memories = lazy(() => import('./pages/Memories'));
const Traces = lazy(() => import('./pages/Traces'));
const TraceRun = lazy(() => import('./pages/TraceRun'));
const ToolServers = lazy(() => import('./pages/ToolServers'));
const Deployments = lazy(() => import('./pages/Deployments'));
const Deployment = lazy(() => import('./pages/Deployment'));
const Usage = lazy(() => import('./pages/Usage'));
const Settings = lazy(() => import('./pages/Settings'));

export function useSession() {
  return useQuery({
    queryKey: ['session'],
    queryFn: async () => {
      const s = await fetchSession();
      setCsrfToken(s?.csrf_token ?? null);
      return s;
    },
    staleTime: Infinity,
  });
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
    <Suspense
      fallback={
        <Center p="xl">
          <Loader aria-label="Loading page" />
        </Center>
      }
    >
      {el}
    </Suspense>
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
        <Route path="/usage" element={page(<Usage />)} />
        <Route path="/settings" element={page(<Settings />)} />
        <Route path="*" element={<Navigate to="/agents" replace />} />
      </Routes>
    </Shell>
  );
}
