// Assembling run reports from the SDK's multipart form: `post.<id>` / `patch.<id>` carry a run, and
// `post.<id>.inputs` (outputs, extra, events, error, serialized) carry its large fields separately.
import { type FieldIssue, invalid } from '../../core/errors.js';

const FIELDS = new Set(['inputs', 'outputs', 'extra', 'events', 'error', 'serialized']);

/** Runs to create and to update, still unvalidated, from the parts of a multipart body. */
export function assembleMultipart(form: Record<string, unknown>): { post: unknown[]; patch: unknown[] } {
  const runs = { post: new Map<string, Record<string, unknown>>(), patch: new Map<string, Record<string, unknown>>() };
  const issues: FieldIssue[] = [];
  const fields: [op: 'post' | 'patch', id: string, field: string, value: unknown][] = [];
  for (const [name, raw] of Object.entries(form)) {
    const [op, id, field, ...rest] = name.split('.');
    if (op === 'attachment') continue; // attachments are not stored (see docs/tracing.md)
    if ((op !== 'post' && op !== 'patch') || !id || rest.length > 0 || (field !== undefined && !FIELDS.has(field))) {
      issues.push({ loc: ['body', name], msg: 'unknown part: expected post.<id>, patch.<id> or <op>.<id>.<field>', type: 'value_error' });
      continue;
    }
    if (typeof raw !== 'string') {
      issues.push({ loc: ['body', name], msg: 'must be a JSON part', type: 'value_error' });
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      issues.push({ loc: ['body', name], msg: 'is not valid JSON', type: 'json_invalid' });
      continue;
    }
    if (field === undefined) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        issues.push({ loc: ['body', name], msg: 'must be a JSON object', type: 'value_error' });
        continue;
      }
      const own = (value as Record<string, unknown>).id;
      if (own !== undefined && own !== id) {
        // Stored under either id, the run's large fields (sent as `<op>.<id>.<field>`) would go astray.
        issues.push({ loc: ['body', name, 'id'], msg: `the part is named for run ${id} but its JSON holds id ${String(own)}`, type: 'value_error' });
        continue;
      }
      runs[op].set(id, { ...(value as Record<string, unknown>), id });
    } else {
      fields.push([op, id, field, value]);
    }
  }
  for (const [op, id, field, value] of fields) {
    const run = runs[op].get(id);
    if (!run) issues.push({ loc: ['body', `${op}.${id}.${field}`], msg: `no ${op}.${id} part for this field`, type: 'value_error' });
    else run[field] = value;
  }
  if (issues.length > 0) throw invalid(issues);
  return { post: [...runs.post.values()], patch: [...runs.patch.values()] };
}
