// The one way Hangar connects to a Kubernetes cluster, shared by the deployment driver and the
// sandbox driver: HANGAR_KUBECONFIG when set, else the client's defaults (in-cluster service
// account, then ~/.kube/config). The client library (and its undici) is imported on first use, so
// servers that never talk to a cluster do not load it.
import type * as k8s from '@kubernetes/client-node';

/** The loaded client library and the configuration of the cluster to talk to. */
export interface KubeConnection {
  lib: typeof k8s;
  kc: k8s.KubeConfig;
}

/** Load the client and the cluster configuration; throws an Error that says what is missing. */
export async function loadKubeConnection(kubeconfig: string | undefined): Promise<KubeConnection> {
  let lib: typeof k8s;
  try {
    lib = await import('@kubernetes/client-node');
  } catch (error) {
    throw new Error(`the Kubernetes client cannot load on this Node.js ${process.version}: ${(error as Error).message}`);
  }
  const kc = new lib.KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error('no Kubernetes cluster is configured (HANGAR_KUBECONFIG, in-cluster service account or ~/.kube/config)');
  return { lib, kc };
}
