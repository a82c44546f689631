/** Which kubeconfig files kubectl reads, and how it merges them. */
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { fail, isObj, type Obj } from './kubeconfig-fields.js';

/** The kubeconfig files kubectl would read: --kubeconfig alone, else every path in $KUBECONFIG, else ~/.kube/config. */
export function kubeconfigPaths(explicit: string | undefined, env: NodeJS.ProcessEnv): { readonly paths: readonly string[]; readonly explicit: boolean } {
  if (explicit) return { paths: [explicit], explicit: true };
  const fromEnv = (env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  if (fromEnv.length) return { paths: fromEnv, explicit: false };
  const home = env.HOME ?? env.USERPROFILE;
  return { paths: home ? [join(home, '.kube', 'config')] : [], explicit: false };
}

/** The fields of a kubeconfig that name files, resolved against the file that defines them. */
const PATH_FIELDS: Readonly<Record<string, readonly string[]>> = {
  clusters: ['certificate-authority'],
  users: ['client-certificate', 'client-key', 'tokenFile'],
};

/**
 * Merges kubeconfig documents as kubectl does (client-go clientcmd, loader.go `Load`): the first file to
 * define a cluster, user or context by name wins, whole (a later file's entry of the same name is
 * discarded, even its other fields); `current-context` comes from the first file that sets it; relative
 * paths resolve against the file that holds them.
 */
export function mergeKubeconfigs(docs: readonly { readonly doc: Obj; readonly path: string }[]): Obj {
  const merged: Obj = { clusters: [], users: [], contexts: [] };
  for (const { doc, path } of docs) {
    if (merged['current-context'] === undefined && typeof doc['current-context'] === 'string' && doc['current-context'])
      merged['current-context'] = doc['current-context'];
    for (const list of ['clusters', 'users', 'contexts'] as const) {
      const entries = doc[list];
      if (entries === undefined || entries === null) continue;
      if (!Array.isArray(entries)) fail(path, list, 'must be a list');
      const into = merged[list] as Obj[];
      for (const e of entries) {
        if (!isObj(e) || typeof e.name !== 'string' || into.some((x) => x.name === e.name)) continue;
        const item = list.slice(0, -1);
        const inner = e[item];
        const fields = PATH_FIELDS[list] ?? [];
        if (isObj(inner) && fields.some((f) => typeof inner[f] === 'string' && !isAbsolute(inner[f] as string))) {
          const fixed: Obj = { ...inner };
          for (const f of fields) if (typeof fixed[f] === 'string' && !isAbsolute(fixed[f] as string)) fixed[f] = join(dirname(path), fixed[f] as string);
          into.push({ ...e, [item]: fixed });
        } else into.push(e);
      }
    }
  }
  return merged;
}
