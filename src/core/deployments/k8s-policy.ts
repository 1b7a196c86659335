// The operator's bounds on what a kubernetes-driven deployment may ask of the cluster
// (HANGAR_DEPLOY_K8S_NAMESPACES, HANGAR_DEPLOY_K8S_POD_POLICY), and the Secrets and claims a
// deployment names, so that one naming what Hangar manages for another deployment is refused.
import type { FieldIssue } from '../errors.js';
import type { SecretReference, SourceConfig } from './types.js';

/** The policy: namespaces deployments may use (empty: any) and how much of the pod they may shape. */
export interface K8sPolicy {
  namespaces: string[];
  pod: 'open' | 'restricted';
}

/** Today's behaviour: any namespace, the pod as given. */
export const OPEN_K8S_POLICY: K8sPolicy = { namespaces: [], pod: 'open' };

/** HANGAR_DEPLOY_K8S_NAMESPACES as a list (blank: any). */
export function parseNamespaces(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Volume sources `restricted` allows: none of them reads a Secret, a claim, or the host's or network's storage. */
const RESTRICTED_VOLUME_SOURCES = new Set(['configMap', 'emptyDir', 'downwardAPI']);

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const SPEC = ['body', 'source_config', 'resource_spec'];

/** A Secret or volume claim a deployment names, and the field that names it. */
export interface NamedObject {
  kind: 'Secret' | 'PersistentVolumeClaim';
  name: string;
  loc: (string | number)[];
}

/**
 * Every Secret and claim the deployment's pods would read: `secret_references`, Secret and claim
 * volumes (and Secrets projected into volumes), and the Secrets its init containers and sidecars take
 * environment from.
 */
export function objectsNamed(sourceConfig: SourceConfig, refs: SecretReference[] | null | undefined): NamedObject[] {
  const out: NamedObject[] = [];
  const secret = (name: string, loc: (string | number)[]) => out.push({ kind: 'Secret', name, loc });
  (refs ?? []).forEach((r, i) => secret(r.secret_name, ['body', 'secret_references', i, 'secret_name']));
  const spec = obj(sourceConfig.resource_spec) ?? {};
  arr(spec.volumes).forEach((v, i) => {
    const volume = obj(obj(v)?.secret);
    if (typeof volume?.secretName === 'string') secret(volume.secretName, [...SPEC, 'volumes', i, 'secret', 'secretName']);
    const claim = obj(obj(v)?.persistentVolumeClaim)?.claimName;
    if (typeof claim === 'string') out.push({ kind: 'PersistentVolumeClaim', name: claim, loc: [...SPEC, 'volumes', i, 'persistentVolumeClaim', 'claimName'] });
    arr(obj(obj(v)?.projected)?.sources).forEach((s, j) => {
      const name = obj(obj(s)?.secret)?.name;
      if (typeof name === 'string') secret(name, [...SPEC, 'volumes', i, 'projected', 'sources', j, 'secret', 'name']);
    });
  });
  for (const group of ['init_containers', 'sidecars'] as const) {
    arr(spec[group]).forEach((c, i) => {
      arr(obj(c)?.env).forEach((e, j) => {
        const name = obj(obj(obj(e)?.valueFrom)?.secretKeyRef)?.name;
        if (typeof name === 'string') secret(name, [...SPEC, group, i, 'env', j, 'valueFrom', 'secretKeyRef', 'name']);
      });
      arr(obj(c)?.envFrom).forEach((e, j) => {
        const name = obj(obj(e)?.secretRef)?.name;
        if (typeof name === 'string') secret(name, [...SPEC, group, i, 'envFrom', j, 'secretRef', 'name']);
      });
    });
  }
  return out;
}

/** What the policy refuses in a kubernetes-driven deployment's namespace and pod (empty: allowed). */
export function checkK8sPolicy(policy: K8sPolicy, sourceConfig: SourceConfig): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const ns = sourceConfig.listener_config?.k8s_namespace ?? 'default';
  if (policy.namespaces.length > 0 && !policy.namespaces.includes(ns)) {
    issues.push({
      loc: ['body', 'source_config', 'listener_config', 'k8s_namespace'],
      msg: `namespace "${ns}" is not one deployments may use on this server (HANGAR_DEPLOY_K8S_NAMESPACES: ${policy.namespaces.join(', ')})`,
      type: 'value_error',
    });
  }
  if (policy.pod !== 'restricted') return issues;
  const why = '(HANGAR_DEPLOY_K8S_POD_POLICY=restricted)';
  const spec = obj(sourceConfig.resource_spec) ?? {};
  if (spec.service_account_name != null) {
    issues.push({ loc: [...SPEC, 'service_account_name'], msg: `is not allowed on this server ${why}`, type: 'policy_forbidden' });
  }
  arr(spec.volumes).forEach((v, i) => {
    for (const key of Object.keys(obj(v) ?? {})) {
      if (key === 'name' || RESTRICTED_VOLUME_SOURCES.has(key)) continue;
      issues.push({
        loc: [...SPEC, 'volumes', i, key],
        msg: `${key} volumes are not allowed on this server ${why}; allowed: ${[...RESTRICTED_VOLUME_SOURCES].join(', ')}`,
        type: 'policy_forbidden',
      });
    }
  });
  for (const group of ['init_containers', 'sidecars'] as const) {
    arr(spec[group]).forEach((c, i) => {
      const sc = obj(obj(c)?.securityContext);
      if (!sc) return;
      const at = [...SPEC, group, i, 'securityContext'];
      if (sc.privileged === true) issues.push({ loc: [...at, 'privileged'], msg: `must not be true on this server ${why}`, type: 'policy_forbidden' });
      if (sc.allowPrivilegeEscalation === true) issues.push({ loc: [...at, 'allowPrivilegeEscalation'], msg: `must not be true on this server ${why}`, type: 'policy_forbidden' });
      if (arr(obj(sc.capabilities)?.add).length > 0) issues.push({ loc: [...at, 'capabilities', 'add'], msg: `must be empty on this server ${why}`, type: 'policy_forbidden' });
      if (sc.runAsUser === 0) issues.push({ loc: [...at, 'runAsUser'], msg: `must not be 0 (root) on this server ${why}`, type: 'policy_forbidden' });
    });
  }
  return issues;
}

/** One thing of a deployment that the policy forbids: the field (`source_config.…`) and why. */
export interface PolicyIssue {
  field: string;
  message: string;
}

/**
 * What of a kubernetes-driven deployment the policy forbids now: its namespace, and the pod of the
 * revision that serves it (`servingSpec`: a rollback may serve another resource_spec than the
 * deployment's). A deployment made or last changed before the policy was set keeps running out of it.
 */
export function policyIssues(policy: K8sPolicy, sourceConfig: SourceConfig, servingSpec: SourceConfig['resource_spec']): PolicyIssue[] {
  return checkK8sPolicy(policy, { ...sourceConfig, resource_spec: servingSpec ?? null }).map((i) => ({ field: i.loc.slice(1).join('.'), message: i.msg }));
}
