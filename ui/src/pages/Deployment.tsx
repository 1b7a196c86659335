import { Alert, Anchor, Badge, Button, Code, Group, Loader, Paper, SegmentedControl, Stack, Text, Timeline, Title } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, canWrite, ok } from '../api';
import { useSession } from '../App';
import { ConfirmDialog } from '../Confirm';
import { deploymentColor } from './Deployments';
import { deploymentQuery } from '../queries';
import { nextOffset, PageButtons, usePages } from '../Pager';
import { LoadError } from '../NotFound';

const REVISIONS_PAGE = 50;

const active = (status: string) => !/READY|DEPLOYED|FAIL|ERROR|SKIPPED|INTERRUPTED|DELETED/.test(status);

export default function Deployment() {
  const { deploymentId = '' } = useParams();
  const session = useSession().data;
  const navigate = useNavigate();
  const client = useQueryClient();
  const path = { deployment_id: deploymentId };
  const deployment = useQuery({
    ...deploymentQuery(deploymentId),
    refetchInterval: (q) => (q.state.data && active(q.state.data.status) ? 1500 : 10_000),
  });
  // Revisions in pages of 50, newest first.
  const pages = usePages<number>();
  const revisions = useQuery({
    queryKey: ['deployment-revisions', deploymentId, deployment.data?.status, pages.page],
    queryFn: async () => ok(await api.GET('/v2/deployments/{deployment_id}/revisions', { params: { path, query: { limit: REVISIONS_PAGE, offset: pages.page ?? 0 } } })),
    // A new status (or page) is a new query: the timeline shown stays until its answer replaces it
    // (it went blank at every status change of a rollout).
    placeholderData: keepPreviousData,
  });
  const [revision, setRevision] = useState<string | null>(null);
  const [kind, setKind] = useState<'build' | 'deploy'>('build');
  useEffect(() => {
    if (!revision && deployment.data?.latest_revision_id) setRevision(deployment.data.latest_revision_id);
  }, [deployment.data, revision]);
  const revStatus = revisions.data?.resources.find((r) => r.id === revision)?.status ?? '';
  const logs = useQuery({
    // The revision's status is in the key: when it ends, the logs are read once more (polling stops
    // then, and its last read could come before the build's last lines were stored). The same
    // revision's same logs stay shown until that read answers; another revision's or kind's never do.
    queryKey: ['deployment-logs', deploymentId, revision, kind, revStatus],
    placeholderData: (previous, query) => (query?.queryKey[2] === revision && query?.queryKey[3] === kind ? previous : undefined),
    enabled: Boolean(revision),
    queryFn: async () =>
      kind === 'build'
        ? ok(await api.GET('/v2/deployments/{deployment_id}/revisions/{revision_id}/build-logs', { params: { path: { ...path, revision_id: revision! } } }))
        : ok(await api.GET('/v2/deployments/{deployment_id}/revisions/{revision_id}/deploy-logs', { params: { path: { ...path, revision_id: revision! } } })),
    refetchInterval: active(revStatus) || kind === 'deploy' ? 1500 : false,
  });
  const redeploy = useMutation({
    mutationFn: async () => ok(await api.POST('/v2/deployments/{deployment_id}/revisions/{revision_id}/redeploy', { params: { path: { ...path, revision_id: revision! } } })),
    onSuccess: (r) => {
      setRevision(r.id);
      void client.invalidateQueries({ queryKey: ['deployment', deploymentId] });
    },
  });
  const [confirmOpen, setConfirmOpen] = useState(false);
  const remove = useMutation({
    mutationFn: async () => ok(await api.DELETE('/v2/deployments/{deployment_id}', { params: { path } })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['deployments'] });
      navigate('/deployments');
    },
  });
  if (deployment.isPending) return <Loader aria-label="Loading deployment" />;
  if (deployment.error) return <LoadError error={deployment.error} kind="deploymentId" />;
  const d = deployment.data;
  return (
    <Stack>
      <div>
        <Anchor component={Link} to="/deployments" size="sm">
          ← Deployments
        </Anchor>
        <Group gap="xs">
          <Title order={2}>{d.name}</Title>
          <Badge color={deploymentColor(d.status)} aria-label={`Status ${d.status}`}>
            {d.status}
          </Badge>
        </Group>
        {d.source_config.custom_url && (
          <Anchor href={d.source_config.custom_url} size="sm" className="wrap-anywhere">
            {d.source_config.custom_url}
          </Anchor>
        )}
      </div>
      {d.policy_issues.length > 0 && (
        <Alert color="yellow" title="Outside this server's Kubernetes policy">
          <Text size="sm">It keeps running as it is, but a change or a redeploy must satisfy the policy:</Text>
          {d.policy_issues.map((i) => (
            <Text size="sm" key={i.field} className="wrap-anywhere">
              <Code>{i.field}</Code> {i.message}
            </Text>
          ))}
        </Alert>
      )}
      {canWrite(session) && (
        <Group gap="xs">
          <Button variant="default" onClick={() => redeploy.mutate()} loading={redeploy.isPending} disabled={!revision}>
            Redeploy
          </Button>
          <Button variant="light" color="red" onClick={() => setConfirmOpen(true)}>
            Delete deployment
          </Button>
        </Group>
      )}
      {redeploy.error && <Alert color="red">{redeploy.error.message}</Alert>}
      <ConfirmDialog
        opened={confirmOpen}
        onClose={() => {
          setConfirmOpen(false);
          remove.reset();
        }}
        title="Delete deployment"
        confirmLabel="Delete deployment"
        onConfirm={() => remove.mutate()}
        pending={remove.isPending}
        error={remove.error}
      >
        <Text className="wrap-anywhere">
          Delete <b>{d.name}</b>? Its app stops serving{d.source_config.custom_url ? ` at ${d.source_config.custom_url}` : ''} and the API key of its running revision is revoked.
        </Text>
      </ConfirmDialog>
      <Paper withBorder p="sm" aria-label="Revisions">
        <Text fw={600} mb="xs">
          Revisions
        </Text>
        <Timeline active={-1} bulletSize={14} lineWidth={2}>
          {revisions.data?.resources.map((r) => (
            <Timeline.Item key={r.id} title={<Anchor component="button" type="button" onClick={() => setRevision(r.id)} fw={r.id === revision ? 700 : 400}>{`${r.status} · ${r.id.slice(0, 8)}`}</Anchor>}>
              <Text size="xs" c="dimmed">
                {new Date(r.created_at).toLocaleString()}
                {r.id === d.active_revision_id ? ' · active' : ''}
                {r.source_revision_config.repo_commit_sha ? ` · ${r.source_revision_config.repo_commit_sha.slice(0, 7)}` : ''}
              </Text>
              {r.status_message && (
                <Text size="xs" c="red" className="wrap-anywhere">
                  {r.status_message}
                </Text>
              )}
            </Timeline.Item>
          ))}
        </Timeline>
        <PageButtons pages={pages} next={revisions.data && nextOffset(pages.page, REVISIONS_PAGE, revisions.data.resources.length)} size="xs" />
      </Paper>
      <Paper withBorder p="sm" aria-label="Logs">
        <Group justify="space-between" mb="xs">
          <Text fw={600}>Logs {revision ? `of ${revision.slice(0, 8)}` : ''}</Text>
          <SegmentedControl
            aria-label="Log kind"
            value={kind}
            onChange={(v) => setKind(v as 'build' | 'deploy')}
            data={[
              { value: 'build', label: 'Build' },
              { value: 'deploy', label: 'Deploy' },
            ]}
          />
        </Group>
        {logs.error && <Alert color="red">{logs.error.message}</Alert>}
        <Code block className="wrap-anywhere" style={{ maxHeight: 420, overflow: 'auto' }} tabIndex={0} aria-label="Log output">
          {(typeof logs.data === 'string' ? logs.data : logs.data?.logs) || '(no output yet)'}
        </Code>
      </Paper>
    </Stack>
  );
}
