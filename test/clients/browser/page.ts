// The smallest chat page on `useStream` (from @langchain/langgraph-sdk/react), as a user would write
// it from the SDK's documentation; only `apiUrl`, `apiKey` and `assistantId` are Hangar's. Bundled
// by the browser test with esbuild and served from another origin than Hangar. No JSX, so the
// test's TypeScript settings need nothing special.
import { useStream } from '@langchain/langgraph-sdk/react';
import { createElement as h, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';

type Message = { id?: string; type: string; content: unknown; tool_calls?: { name: string }[] };
const params = new URLSearchParams(location.search);
const seen: string[] = [];
(window as unknown as { __seen: string[] }).__seen = seen;

function text(content: unknown): string {
  return typeof content === 'string' ? content : JSON.stringify(content);
}

function App() {
  const [threadId, setThreadId] = useState<string | null>(params.get('thread'));
  const [draft, setDraft] = useState('');
  const stream = useStream<{ messages: Message[] }>({
    apiUrl: params.get('api')!,
    apiKey: params.get('key')!,
    assistantId: params.get('assistant')!,
    threadId,
    onThreadId: (id: string) => {
      setThreadId(id);
      const url = new URL(location.href);
      url.searchParams.set('thread', id);
      history.replaceState(null, '', url);
    },
    fetchStateHistory: true,
  });
  const messages = stream.messages as Message[];
  const last = messages.filter((m) => m.type === 'ai').at(-1);
  // Every AI text the page rendered, to see tokens arrive one after another.
  useEffect(() => {
    if (last) seen.push(text(last.content));
  }, [last ? text(last.content) : '']);
  const interrupt = stream.interrupt as { value?: { action_requests?: { name: string; args: unknown }[] } } | undefined;
  return h(
    'main',
    null,
    h('div', { id: 'thread' }, threadId ?? ''),
    h('div', { id: 'state' }, stream.isLoading ? 'loading' : 'idle'),
    h(
      'ol',
      { id: 'messages' },
      messages.map((m, i) => {
        const body = m.tool_calls && m.tool_calls.length > 0 ? `[calls ${m.tool_calls.map((c) => c.name).join(',')}]` : text(m.content);
        if (m.type !== 'human') return h('li', { key: m.id ?? i, className: `msg ${m.type}` }, body);
        // Edit a message (send the draft in its place, from the state before it) and switch between
        // its versions, as the SDK's documentation shows branching.
        const meta = stream.getMessagesMetadata(m as never, i);
        const options = meta?.branchOptions ?? [];
        const at = options.indexOf(meta?.branch ?? '');
        const edit = () => {
          void stream.submit({ messages: [{ type: 'human', content: draft }] }, { checkpoint: meta?.firstSeenState?.parent_checkpoint ?? null });
          setDraft('');
        };
        return h(
          'li',
          { key: m.id ?? i, className: `msg ${m.type}` },
          h('span', { className: 'text' }, body),
          h('button', { className: 'edit', onClick: edit }, 'Edit'),
          options.length > 1
            ? h(
                'span',
                { className: 'branch' },
                h('button', { className: 'prev', onClick: () => stream.setBranch(options[at - 1]!) }, '<'),
                h('span', { className: 'of' }, `${at + 1}/${options.length}`),
                h('button', { className: 'next', onClick: () => stream.setBranch(options[at + 1]!) }, '>'),
              )
            : null,
        );
      }),
    ),
    interrupt?.value?.action_requests
      ? h(
          'div',
          { id: 'interrupt' },
          h('span', null, `approve ${interrupt.value.action_requests.map((a) => `${a.name} ${JSON.stringify(a.args)}`).join('; ')}?`),
          h('button', { id: 'approve', onClick: () => void stream.submit(null, { command: { resume: { decisions: [{ type: 'approve' }] } } }) }, 'Approve'),
        )
      : null,
    h('input', { id: 'draft', value: draft, onChange: (e: { target: { value: string } }) => setDraft(e.target.value) }),
    h(
      'button',
      {
        id: 'send',
        onClick: () => {
          void stream.submit({ messages: [{ type: 'human', content: draft }] });
          setDraft('');
        },
      },
      'Send',
    ),
    h('button', { id: 'new-thread', onClick: () => setThreadId(null) }, 'New thread'),
    h('input', { id: 'switch-to' }),
    h('button', { id: 'switch', onClick: () => setThreadId((document.getElementById('switch-to') as HTMLInputElement).value) }, 'Open thread'),
  );
}

createRoot(document.getElementById('root')!).render(h(App));
