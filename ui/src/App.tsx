import { Center, Loader } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useRef } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { setCsrfToken, whenSignedOut } from './api';
import { sessionQuery } from './queries';
import { pages, preload } from './routes';
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
const Usage = lazy(pages.Usage);
const Settings = lazy(pages.Settings);

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
