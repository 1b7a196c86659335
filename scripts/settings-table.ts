// Prints the README's configuration table from the settings table (`npx tsx scripts/settings-table.ts`).
// A setting with no single default keeps the placeholder the README gives it (`<data dir>/…`).
import { readFileSync } from 'node:fs';
import { settingDefault, settings } from '../src/config/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const shown = new Map<string, string>();
for (const line of readme.split('\n')) {
  const env = /^\| `([A-Z0-9_]+)` \|/.exec(line)?.[1];
  if (env) shown.set(env, line.split(' | ')[2]!.trim());
}
const rows = Object.values(settings).map((s: { env: string; flag?: string; description: string } & Parameters<typeof settingDefault>[0]) => {
  const value = settingDefault(s);
  const cell = value !== undefined ? `\`${value}\`` : /^`<[^>]+>[^`]*`$/.test(shown.get(s.env) ?? '') ? shown.get(s.env)! : '';
  return `| \`${s.env}\` | ${s.flag ? `\`--${s.flag}\`` : ''} | ${cell} | ${s.description.replace(/\|/g, '\\|')} |`;
});
console.log(['| Environment | Flag | Default | Meaning |', '|---|---|---|---|', ...rows].join('\n'));
