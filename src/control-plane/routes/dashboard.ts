/**
 * `GET /dashboard` and `/dashboard/{asset}`: the operator's page, plain HTML, ES modules and CSS from
 * `../dashboard/`, read once when the app starts (no build step). The page holds no data, so it is
 * served as `/docs` is; everything it shows it reads from the API under the API's own rules, and its
 * writes are the API's keyval writes, with the token the operator types into it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { LimitswitchError } from '../../shared/errors.ts';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';

const ASSET_DIR = new URL('../dashboard/', import.meta.url);

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** Only this origin's scripts and styles, its API as the one place to fetch from, no framing. */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

/** name → asset, for every file of the page (the page itself is `index.html`). */
function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(ASSET_DIR)) {
    const type = CONTENT_TYPES[extname(name)];
    if (type) assets.set(name, { type, body: readFileSync(new URL(name, ASSET_DIR)) });
  }
  return assets;
}

export function dashboardRoutes(app: FastifyInstance, ctx: ControlPlaneContext): void {
  const assets = loadAssets();
  const send = (name: string) => {
    const asset = assets.get(name);
    if (!asset) throw new LimitswitchError('PathNotFound');
    return asset;
  };
  const headers = {
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    // A new version of the page is picked up at the next load.
    'cache-control': 'no-cache',
  };
  addSpecRoute(app, ctx, 'getDashboard', async (_request, reply) => {
    const page = send('index.html');
    return reply.headers(headers).type(page.type).send(page.body);
  });
  addSpecRoute(app, ctx, 'getDashboardAsset', async (request, reply) => {
    const { asset } = request.params as { asset: string };
    const file = send(asset);
    return reply.headers(headers).type(file.type).send(file.body);
  });
}
