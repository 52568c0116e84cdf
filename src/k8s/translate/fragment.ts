/**
 * What one Ingress contributes to the config, before assembly: http-level blocks (its zones, geo/map),
 * upstreams, and servers with locations. Fragments are built per Ingress so that one bad Ingress can be
 * set aside (keeping its last good fragment) without touching the others.
 */
import type { ObjectRef } from '../objects.ts';

export type IngressRole = 'plain' | 'master' | 'minion';

export interface LocationFragment {
  /** `~`: a regular expression location (Gateway API `RegularExpression` paths); `~*`: ingress-nginx's. */
  readonly match: '=' | 'prefix' | '~' | '~*';
  readonly path: string;
  /** `namespace/name` of the Ingress that declared the path. */
  readonly owner: string;
  readonly comments: readonly string[];
  readonly snippets: readonly string[];
  /** Where the snippets came from (`metadata.annotations[…]` or the ConfigMap's `data[…]`). */
  readonly snippetsField: string;
  readonly upstream: string;
  /** The `proxy_pass` URL when it is not `http://<upstream>` (a variable one picks the upstream per request). */
  readonly proxyPass?: string;
  /** Rewrite-phase lines (`if (…) { return …; }`, `rewrite …`) before `proxy_pass`. */
  readonly rewriteLines?: readonly string[];
  /** Snippets of other annotations, after `snippets` (ingress-nginx's `configuration-snippet`). */
  readonly moreSnippets?: readonly { readonly lines: readonly string[]; readonly field: string }[];
  /** Server-level rewrite lines this location's Ingress brings to the host (`app-root`, `redirect-to-https`). */
  readonly serverLines?: readonly string[];
  /** ingress-nginx's `use-regex`/`rewrite-target`: every location of the host is then a regex one. */
  readonly regexHost?: boolean;
  /** `limit_req …;` and friends generated from annotations (after `proxy_pass`, as NIC writes them). */
  readonly limitLines: readonly string[];
}

export interface ServerFragment {
  /** Empty for rules without a host (the default server). */
  readonly host: string;
  /** The TLS secret for this host, or null when the Ingress has no TLS entry for it. */
  readonly tlsSecret: string | null;
  readonly tls: boolean;
  /** With TLS: plain HTTP to the host is redirected with this status (NIC 301, ingress-nginx 308); null: served. */
  readonly sslRedirect: 301 | 308 | null;
  /** Whether the host is served over plain HTTP at all (default true; a Gateway with only HTTPS listeners: false). */
  readonly plainHttp?: boolean;
  readonly serverSnippets: readonly string[];
  readonly serverSnippetsField: string;
  /** Snippets of other annotations, after `serverSnippets` (ingress-nginx's `server-snippet`). */
  readonly moreServerSnippets?: readonly { readonly lines: readonly string[]; readonly field: string }[];
  readonly locations: readonly LocationFragment[];
}

export interface UpstreamFragment {
  readonly name: string;
  readonly servers: readonly string[];
  readonly note: string | null;
}

export interface IngressFragment {
  readonly key: string;
  readonly ref: ObjectRef;
  readonly role: IngressRole;
  /** Creation order, for "the oldest wins". */
  readonly createdMs: number;
  /** Lines at http level (zones, `geo`, `map`), each block with the annotation it came from. */
  readonly httpBlocks: readonly { readonly lines: readonly string[]; readonly field: string }[];
  readonly upstreams: readonly UpstreamFragment[];
  readonly servers: readonly ServerFragment[];
}
