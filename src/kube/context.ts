/** What a kubeconfig (or a pod's service account) resolves to: the cluster, the user and the namespace a probe uses. */

export interface ExecPluginConfig {
  readonly apiVersion: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
  readonly provideClusterInfo: boolean;
  readonly installHint?: string;
}

export interface ResolvedCluster {
  readonly name: string;
  readonly server: URL;
  readonly caPem?: string;
  readonly insecureSkipTlsVerify: boolean;
  readonly tlsServerName?: string;
  readonly proxyUrl?: URL;
}

export interface ResolvedUser {
  readonly name: string;
  readonly token?: string;
  readonly tokenFile?: string;
  readonly clientCertPem?: string;
  readonly clientKeyPem?: string;
  readonly exec?: ExecPluginConfig;
  readonly username?: string;
  readonly password?: string;
}

export interface ResolvedContext {
  readonly contextName: string;
  readonly namespace: string;
  readonly cluster: ResolvedCluster;
  readonly user: ResolvedUser;
  /** Where the kubeconfig came from, for messages. */
  readonly source: string;
}
