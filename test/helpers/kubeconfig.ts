/** A kubeconfig for the fake API server (`server` is its URL; the token is not checked). */
export function kubeconfig(server: string): string {
  return `apiVersion: v1
kind: Config
clusters:
  - name: fake
    cluster:
      server: ${server}
      insecure-skip-tls-verify: true
users:
  - name: fake
    user:
      token: fake-token
contexts:
  - name: fake
    context:
      cluster: fake
      user: fake
current-context: fake
`;
}
