// A Console address that names nothing: a mistyped path, an id that is not one, or a thing that is
// not (or no longer) in this workspace. Said in words, with a way back, instead of the API's wording
// ("path.agent_id: must be a UUID") or a silent jump to another page.
import { Alert, Anchor, Button, Group, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { ApiError } from './api';

/** The shape of every id in a Console path. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What each id of a Console path names, and the list page to go back to. */
const KINDS = {
  agentId: { what: 'agent', list: '/agents', label: 'Agents' },
  threadId: { what: 'thread', list: '/agents', label: 'Agents' },
  runId: { what: 'run', list: '/traces', label: 'Traces' },
  deploymentId: { what: 'deployment', list: '/deployments', label: 'Deployments' },
} as const;
type IdParam = keyof typeof KINDS;

export function NotFound({ what, list = '/agents', label = 'Agents' }: { what?: string | undefined; list?: string; label?: string }) {
  const location = useLocation();
  const navigate = useNavigate();
  return (
    <Stack align="flex-start" gap="sm">
      <Title order={2}>{what ? `No such ${what}` : 'Page not found'}</Title>
      <Text className="wrap-anywhere">
        {what ? (
          <>
            There is no {what} at <code>{location.pathname}</code> in this workspace: the address may be mistyped, or the {what} deleted.
          </>
        ) : (
          <>
            The Console has no page at <code>{location.pathname}</code>: the address may be mistyped.
          </>
        )}
      </Text>
      <Group gap="sm">
        <Button component={Link} to={list}>
          Go to {label}
        </Button>
        {window.history.length > 1 && (
          <Button variant="default" onClick={() => navigate(-1)}>
            Go back
          </Button>
        )}
      </Group>
    </Stack>
  );
}

/** The page, or "no such …" when an id in its path cannot name anything (not a UUID). */
export function WithIds({ children }: { children: ReactNode }) {
  const params = useParams();
  const bad = (Object.keys(KINDS) as IdParam[]).find((p) => params[p] !== undefined && !UUID.test(params[p]!));
  if (bad) return <NotFound {...KINDS[bad]} />;
  return children;
}

/** A page's failed first read: "no such …" when the server does not know it, else its message. */
export function LoadError({ error, kind }: { error: Error; kind: IdParam }) {
  if (error instanceof ApiError && error.status === 404) return <NotFound {...KINDS[kind]} />;
  return (
    <Alert color="red">
      <Text size="sm" className="wrap-anywhere">
        {error.message}
      </Text>
      <Anchor component={Link} to={KINDS[kind].list} size="sm">
        Go to {KINDS[kind].label}
      </Anchor>
    </Alert>
  );
}
