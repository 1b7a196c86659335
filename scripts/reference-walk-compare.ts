// Compares Hangar's served OpenAPI document with the hosted reference's, operation by operation:
// missing operations and parameters, fields one has and the other lacks, different required sets,
// enum values and nullability. Used by scripts/reference-walk.ts.
/* eslint-disable @typescript-eslint/no-explicit-any -- both documents are untyped JSON walked by hand */
type Json = any;

/** One line per difference, for the reference's operations only. */
export function compareDocs(ref: Json, ours: Json, prefix = '/v1/deepagents'): string[] {
  const out: string[] = [];
  const resolver = (doc: Json) => {
    const deref = (n: Json): Json => (n && typeof n === 'object' && typeof n.$ref === 'string' ? deref(n.$ref.slice(2).split('/').map((s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~')).reduce((o: Json, k: string) => o?.[k], doc)) : n);
    /** Flatten to {props: name -> schema, required, nullable} */
    const flat = (n: Json): Json => {
      let s = deref(n);
      if (!s) return s;
      let nullable = false;
      if (s.anyOf || s.oneOf) {
        const alts = (s.anyOf ?? s.oneOf).map(deref);
        nullable = alts.some((a: Json) => a?.type === 'null');
        const nonNull = alts.filter((a: Json) => a?.type !== 'null');
        if (nonNull.length === 1) s = { ...flat(nonNull[0]), description: s.description };
        else s = { ...s, variants: nonNull.map(flat) };
      }
      if (s.allOf && s.allOf.filter((p: Json) => p.$ref || p.type || p.properties).length === 1) s = { ...flat(s.allOf.find((p: Json) => p.$ref || p.type || p.properties)), description: s.description };
      if (s.allOf) {
        const merged: Json = { type: 'object', properties: {}, required: [] };
        for (const p of s.allOf.map(flat)) { Object.assign(merged.properties, p.properties ?? {}); merged.required.push(...(p.required ?? [])); }
        s = merged;
      }
      if (Array.isArray(s.type) && s.type.includes('null')) { nullable = true; s = { ...s, type: s.type.filter((t: string) => t !== 'null')[0] }; }
      if (s.nullable) nullable = true;
      return { ...s, __nullable: nullable || s.__nullable };
    };
    return { deref, flat };
  };
  const R = resolver(ref), O = resolver(ours);
  const norm = (p: string) => p.replace(/\{[^}]+\}/g, '{}');
  const ourOps = new Map<string, Json>();
  for (const [p, item] of Object.entries<Json>(ours.paths)) for (const [m, op] of Object.entries<Json>(item)) if (typeof op === 'object' && op.responses) ourOps.set(`${m} ${norm(p)}`, { op, path: p });

  const walkSchema = (where: string, r: Json, o: Json, mode: 'request' | 'response', depth = 0) => {
    const rs = R.flat(r), os = O.flat(o);
    if (!rs || !os || depth > 4) return;
    if (rs.__nullable && !os.__nullable && mode === 'request') out.push(`${where}: reference allows null, ours does not`);
    if (!rs.__nullable && os.__nullable && mode === 'response') out.push(`${where}: ours may be null, the reference's may not`);
    const rt = rs.type, ot = os.type ?? (os.variants ? 'union' : undefined);
    if (rt && ot && rt !== ot && ot !== 'union' && !(rt === 'integer' && ot === 'number') && !(rt === 'number' && ot === 'integer')) out.push(`${where}: type ${rt} in the reference, ${ot} in ours`);
    if (rs.enum && os.enum) {
      const missing = rs.enum.filter((v: Json) => !os.enum.includes(v));
      const extra = os.enum.filter((v: Json) => !rs.enum.includes(v));
      if (missing.length && mode === 'request') out.push(`${where}: enum values of the reference ours refuses: ${missing.join(', ')}`);
      if (extra.length && mode === 'response') out.push(`${where}: enum values ours sends that the reference lacks: ${extra.join(', ')}`);
    }
    if (rs.properties) {
      const op = os.properties ?? {};
      const oVariantProps = os.variants ? Object.assign({}, ...os.variants.map((v: Json) => v.properties ?? {})) : {};
      for (const [k, v] of Object.entries<Json>(rs.properties)) {
        const mine = op[k] ?? oVariantProps[k];
        if (!mine) {
          if (os.additionalProperties === true || os.additionalProperties === undefined && !os.properties) continue;
          out.push(`${where}.${k}: in the reference, not in ours`);
          continue;
        }
        walkSchema(`${where}.${k}`, v, mine, mode, depth + 1);
      }
      const rreq = new Set<string>(rs.required ?? []), oreq = new Set<string>(os.required ?? []);
      if (mode === 'request') for (const k of oreq) if (!rreq.has(k) && k in rs.properties) out.push(`${where}: ours requires ${k}, the reference does not`);
      if (mode === 'request') for (const k of rreq) if (!oreq.has(k)) out.push(`${where}: the reference requires ${k}, ours does not`);
    }
    if (rs.type === 'array' && rs.items && os.items) walkSchema(`${where}[]`, rs.items, os.items, mode, depth + 1);
    if (rs.additionalProperties && typeof rs.additionalProperties === 'object' && os.additionalProperties && typeof os.additionalProperties === 'object') walkSchema(`${where}{}`, rs.additionalProperties, os.additionalProperties, mode, depth + 1);
  };

  for (const [p, item] of Object.entries<Json>(ref.paths)) {
    for (const [m, op] of Object.entries<Json>(item)) {
      if (!op.operationId) continue;
      const id = op.operationId;
      const mine = ourOps.get(`${m} ${norm(prefix + p)}`);
      if (!mine) { out.push(`${id}: missing from ours`); continue; }
      if (mine.op.operationId !== id) out.push(`${id}: ours is named ${mine.op.operationId}`);
      const rParams = (op.parameters ?? []).map(R.deref);
      const oParams = (mine.op.parameters ?? []).map(O.deref);
      for (const rp of rParams) {
        if (rp.in === 'path') continue;
        const op2 = oParams.find((x: Json) => x.in === rp.in && x.name.toLowerCase() === rp.name.toLowerCase());
        if (!op2) { out.push(`${id}: ${rp.in} parameter ${rp.name} not declared by ours`); continue; }
        const rsch = R.deref(rp.schema), osch = O.flat(op2.schema);
        if (rsch.enum && osch.enum && rsch.enum.some((v: Json) => !osch.enum.includes(v))) out.push(`${id}: parameter ${rp.name} enum differs`);
        if (rsch.default !== undefined && osch.default !== undefined && rsch.default !== osch.default) out.push(`${id}: parameter ${rp.name} default ${rsch.default} vs ours ${osch.default}`);
        if (rsch.maximum !== undefined && osch.maximum !== undefined && rsch.maximum !== osch.maximum) out.push(`${id}: parameter ${rp.name} maximum ${rsch.maximum} vs ours ${osch.maximum}`);
      }
      const rBody = R.deref(op.requestBody)?.content?.['application/json']?.schema;
      const oBody = O.deref(mine.op.requestBody)?.content?.['application/json']?.schema;
      if (rBody && !oBody) out.push(`${id}: the reference has a request body, ours none`);
      if (rBody && oBody) walkSchema(`${id} request`, rBody, oBody, 'request');
      const rOk = Object.keys(op.responses).filter((s) => s.startsWith('2'));
      const oOk = Object.keys(mine.op.responses).filter((s) => s.startsWith('2'));
      for (const s of rOk) {
        if (!oOk.includes(s)) { out.push(`${id}: success status ${s} of the reference not declared by ours (ours: ${oOk.join(', ')})`); continue; }
        const rr = R.deref(op.responses[s])?.content?.['application/json']?.schema;
        const or = O.deref(mine.op.responses[s])?.content?.['application/json']?.schema;
        if (rr && !or) out.push(`${id} ${s}: the reference answers JSON, ours declares no JSON body`);
        if (rr && or) walkSchema(`${id} ${s}`, rr, or, 'response');
      }
      for (const s of oOk) if (!rOk.includes(s)) out.push(`${id}: ours declares success status ${s}, the reference does not`);
    }
  }
  return out;
}
