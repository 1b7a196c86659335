// An agent's /memories/ (shared by every thread) and the signed-in principal's /memories/user/ —
// and, for admins, any other principal's — read and edited through LangGraph's store endpoints; the
// next run reads what is saved here.
import { Alert, Anchor, Button, Card, Group, Loader, NativeSelect, NavLink, Stack, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { api, canWrite, ok, type Schemas } from '../api';
import { useSession } from '../App';
import { ConfirmDialog } from '../Confirm';
import { allRows, PageButtons, usePages } from '../Pager';
import { agentQuery } from '../queries';
import { signedInAs } from '../Shell';

type Item = Schemas['StoreItem'];

/** The store label of a principal: `p-` + base64url of its UTF-8 bytes, `_` written `~` (as the server computes it). */
function principalLabel(principal: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(principal)) binary += String.fromCharCode(byte);
  return `p-${btoa(binary).replace(/\+/g, '-').replace(/\//g, '~').replace(/=+$/, '')}`;
}

/** The principal a store label names (the label itself if it is not one of ours). */
function principalOf(label: string): string {
  if (!label.startsWith('p-')) return label;
  try {
    const b64 = label.slice(2).replace(/-/g, '+').replace(/~/g, '/');
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
  } catch {
    return label;
  }
}

/** A memory file's text, whether deepagents stored it as one string or as lines. */
function textOf(item: Item): string {
  const content = item.value.content;
  return Array.isArray(content) ? content.join('\n') : typeof content === 'string' ? content : JSON.stringify(item.value, null, 2);
}

/** The value to store for new text, in the form the item already has. */
function valueWith(item: Item | undefined, text: string): Record<string, unknown> {
  const now = new Date().toISOString();
  if (!item) return { content: text, created_at: now, modified_at: now };
  return { ...item.value, content: Array.isArray(item.value.content) ? text.split('\n') : text, modified_at: now };
}

const MEMORIES_PAGE = 100;
/** Items a search asks for at once (the most it may). */
const SEARCH_LIMIT = 1000;

/**
 * A page of the files directly in `namespace`, from the item at `offset` of the search under it. The
 * agent's folder holds the principals' folders too, whose files the search answers among its own: the
 * search is read on until the page is full or the folder is done. `next`: where the next page starts.
 */
async function filesFrom(namespace: string[], offset: number): Promise<{ files: Item[]; next: number | null }> {
  const files: Item[] = [];
  for (let at = offset; ; at += SEARCH_LIMIT) {
    const found = ok(await api.POST('/v1/deepagents/store/items/search', { body: { namespace_prefix: namespace, limit: SEARCH_LIMIT, offset: at } }));
    for (const [i, item] of found.items.entries()) {
      if (item.namespace.length !== namespace.length) continue;
      if (files.length === MEMORIES_PAGE) return { files: byPath(files), next: at + i };
      files.push(item);
    }
    if (found.items.length < SEARCH_LIMIT) return { files: byPath(files), next: null };
  }
}

function byPath(files: Item[]): Item[] {
  return files.sort((a, b) => a.key.localeCompare(b.key));
}

function MemoryFolder({ title, root, namespace, writable }: { title: string; root: string; namespace: string[]; writable: boolean }) {
  const client = useQueryClient();
  const queryKey = ['memories', ...namespace];
  // Pages of 100 files, the most recently changed first (each page in path order).
  const pages = usePages<number>();
  const page = useQuery({ queryKey: [...queryKey, pages.page], queryFn: () => filesFrom(namespace, pages.page ?? 0) });
  const files = page.data?.files;
  const [selected, setSelected] = useState<string | null>(null);
  const [text, setText] = useState('');
  const [newPath, setNewPath] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const current = files?.find((i) => i.key === selected);
  useEffect(() => {
    if (current) setText(textOf(current));
  }, [current]);

  const save = useMutation({
    mutationFn: async ({ key, value }: { key: string; value: Record<string, unknown> }) => {
      ok(await api.PUT('/v1/deepagents/store/items', { body: { namespace, key, value } }));
      return key;
    },
    onSuccess: async (key) => {
      // What was saved is now the most recently changed: on the first page.
      pages.go(undefined);
      await client.invalidateQueries({ queryKey });
      setSelected(key);
      setSaved(key);
    },
  });
  const remove = useMutation({
    mutationFn: async (key: string) => ok(await api.DELETE('/v1/deepagents/store/items', { body: { namespace, key } })),
    onSuccess: async () => {
      setConfirmDelete(false);
      setSelected(null);
      setSaved(null);
      await client.invalidateQueries({ queryKey });
    },
  });
  const closeDelete = () => {
    setConfirmDelete(false);
    remove.reset();
  };
  // A new file never replaces one of the same name (it may be on another page than the one shown):
  // the name is looked up first, and an existing file is opened when shown, or named, not emptied.
  const add = useMutation({
    mutationFn: async (key: string) => {
      const existing = ok(await api.GET('/v1/deepagents/store/items', { params: { query: { namespace: namespace.join('.'), key } } }));
      if (existing) {
        if (files?.some((i) => i.key === key)) setSelected(key);
        throw new Error(`${root}${key.replace(/^\//, '')} already exists: open it from the list to edit it`);
      }
      setNewPath('');
      setText('');
      save.mutate({ key, value: valueWith(undefined, '') });
    },
  });
  const create = (e: FormEvent) => {
    e.preventDefault();
    const key = `/${newPath.trim().replace(/^\/+/, '')}`;
    if (key === '/') return;
    setSaved(null);
    add.mutate(key);
  };

  return (
    <Card withBorder component="section" aria-label={title}>
      <Stack gap="sm">
        <Title order={3} size="h4">
          {title}
        </Title>
        {page.error && <Alert color="red">{page.error.message}</Alert>}
        {page.isPending && <Loader size="sm" aria-label={`Loading ${title}`} />}
        {files?.length === 0 && <Text c="dimmed">No files under {root} yet.</Text>}
        <nav aria-label={`Files of ${title}`}>
          {files?.map((i) => (
            <NavLink
              component="button"
              key={i.key}
              label={`${root}${i.key.replace(/^\//, '')}`}
              description={`changed ${new Date(i.updated_at).toLocaleString()}`}
              active={i.key === selected}
              onClick={() => {
                setSaved(null);
                setSelected(i.key);
              }}
            />
          ))}
        </nav>
        <PageButtons pages={pages} next={page.data?.next} size="xs" />
        {current && (
          <Stack gap="xs">
            <Textarea
              label={`Content of ${root}${current.key.replace(/^\//, '')}`}
              value={text}
              onChange={(e) => {
                setSaved(null);
                setText(e.currentTarget.value);
              }}
              readOnly={!writable}
              autosize
              minRows={4}
              maxRows={20}
              styles={{ input: { fontFamily: 'monospace' } }}
            />
            {writable && (
              <Group gap="xs">
                <Button onClick={() => save.mutate({ key: current.key, value: valueWith(current, text) })} loading={save.isPending} disabled={text === textOf(current)}>
                  Save memory
                </Button>
                <Button variant="light" color="red" onClick={() => setConfirmDelete(true)}>
                  Delete memory
                </Button>
                {saved === current.key && (
                  <Text size="sm" role="status">
                    Saved; the next run reads it
                  </Text>
                )}
              </Group>
            )}
          </Stack>
        )}
        {current && (
          <ConfirmDialog
            opened={confirmDelete}
            onClose={closeDelete}
            title="Delete memory"
            confirmLabel="Delete memory"
            onConfirm={() => remove.mutate(current.key)}
            pending={remove.isPending}
            error={remove.error}
          >
            <Text size="sm" className="wrap-anywhere">
              {root}
              {current.key.replace(/^\//, '')} is deleted for good: the agent's next run no longer reads it.
            </Text>
          </ConfirmDialog>
        )}
        {save.error && <Alert color="red">{save.error.message}</Alert>}
        {add.error && <Alert color="red">{add.error.message}</Alert>}
        {writable && (
          <Group component="form" onSubmit={create} align="flex-end" gap="xs">
            <TextInput label={`New file under ${root}`} placeholder="notes.md" value={newPath} onChange={(e) => {
                add.reset();
                setNewPath(e.currentTarget.value);
              }}
            />
            <Button type="submit" variant="default" disabled={newPath.trim() === ''} loading={add.isPending}>
              Add file
            </Button>
          </Group>
        )}
      </Stack>
    </Card>
  );
}

export default function Memories() {
  const { agentId = '' } = useParams();
  const session = useSession().data;
  const agent = useQuery(agentQuery(agentId));
  if (agent.isPending || !session) return <Loader aria-label="Loading agent" />;
  if (agent.error) return <Alert color="red">{agent.error.message}</Alert>;
  const writable = canWrite(session);
  return (
    <Stack>
      <div>
        <Anchor component={Link} to={`/agents/${agentId}`} size="sm">
          ← {agent.data.name}
        </Anchor>
        <Title order={2} className="wrap-anywhere">
          Memories of {agent.data.name}
        </Title>
        <Text size="sm" c="dimmed">
          Files the agent keeps across threads. What you save here is what its next run reads.
        </Text>
      </div>
      <MemoryFolder title="Agent memories" root="/memories/" namespace={[agentId, 'memories']} writable={writable} />
      <MemoryFolder title={`Your memories (${signedInAs(session)})`} root="/memories/user/" namespace={[agentId, 'memories', 'user', principalLabel(session.principal)]} writable={writable} />
      {session.role === 'admin' && <OtherPrincipals agentId={agentId} own={principalLabel(session.principal)} />}
    </Stack>
  );
}

/** Admins only: the memories other principals keep with this agent, one principal at a time. */
function OtherPrincipals({ agentId, own }: { agentId: string; own: string }) {
  const prefix = [agentId, 'memories', 'user'];
  const labels = useQuery({
    queryKey: ['memory-principals', agentId],
    queryFn: async () => {
      // Every principal: the choice offers them all.
      const namespaces = await allRows(SEARCH_LIMIT, async (offset) =>
        ok(await api.POST('/v1/deepagents/store/namespaces', { body: { prefix, max_depth: prefix.length + 1, limit: SEARCH_LIMIT, offset } })).namespaces,
      );
      return namespaces.map((n) => n[prefix.length]).filter((l): l is string => Boolean(l) && l !== own);
    },
  });
  const [chosen, setChosen] = useState('');
  if (labels.error) return <Alert color="red">{labels.error.message}</Alert>;
  if (!labels.data?.length) return null;
  return (
    <Stack gap="sm">
      <NativeSelect
        label="Another principal’s memories"
        description="As an admin you may read and edit them."
        data={[{ value: '', label: 'Choose a principal…' }, ...labels.data.map((l) => ({ value: l, label: principalOf(l) }))]}
        value={chosen}
        onChange={(e) => setChosen(e.currentTarget.value)}
        maw={480}
      />
      {chosen && <MemoryFolder key={chosen} title={`Memories of ${principalOf(chosen)}`} root="/memories/user/" namespace={[...prefix, chosen]} writable />}
    </Stack>
  );
}
