/** A kubeconfig for a server of a test's own (one cluster, one user, namespace default), written to `path`. */
import { writeFileSync } from 'node:fs';
import YAML from 'yaml';

export function writePlainKubeconfig(path: string, server: string, user: Readonly<Record<string, string>> = {}): string {
  writeFileSync(
    path,
    YAML.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'h',
      clusters: [{ name: 'h', cluster: { server: server.replace(/\/$/, '') } }],
      users: [{ name: 'h', user }],
      contexts: [{ name: 'h', context: { cluster: 'h', user: 'h', namespace: 'default' } }],
    }),
  );
  return path;
}
