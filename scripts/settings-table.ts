// Prints the README's configuration table from the settings table (`npx tsx scripts/settings-table.ts`).
import { settings } from '../src/config/index.js';

const rows = Object.values(settings).map((s: { env: string; flag?: string; schema: { safeParse(v: unknown): { success: boolean; data?: unknown } }; description: string }) => {
  const parsed = s.schema.safeParse(undefined);
  const value = parsed.success && parsed.data !== undefined ? `\`${String(parsed.data)}\`` : '';
  return `| \`${s.env}\` | ${s.flag ? `\`--${s.flag}\`` : ''} | ${value} | ${s.description.replace(/\|/g, '\\|')} |`;
});
console.log(['| Environment | Flag | Default | Meaning |', '|---|---|---|---|', ...rows].join('\n'));
