// A server error as an alert. Some name an API path the Console has a page for ("create it under
// /v1/deepagents/model-configs"): the message stays as the server wrote it, with a link to that page.
import { Alert, Anchor, Text } from '@mantine/core';
import { Link } from 'react-router';

const PAGES: { path: string; to: string; label: string }[] = [
  { path: '/v1/deepagents/model-configs', to: '/settings', label: 'Save a model configuration in Settings' },
  { path: '/v1/deepagents/mcp-servers', to: '/tool-servers', label: 'Register a tool server in Tool servers' },
];

export function ServerError({ error }: { error: Error }) {
  const pages = PAGES.filter((p) => error.message.includes(p.path));
  return (
    <Alert color="red">
      <Text size="sm" className="wrap-anywhere">
        {error.message}
      </Text>
      {pages.map((p) => (
        <Anchor key={p.to} component={Link} to={p.to} size="sm" display="block" mt={4}>
          {p.label}
        </Anchor>
      ))}
    </Alert>
  );
}
