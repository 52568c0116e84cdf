/**
 * `add_header` over HTTP/2, replica vs nginx: a name added twice is two fields as nginx sends it,
 * and a name node:http2 sends once only (`x-content-type-options`) is one field holding both lines,
 * where it would otherwise fail the answer.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

function body(port: number): string {
  return `
    server {
        listen 127.0.0.1:${port} http2;
        location / {
            add_header X-Content-Type-Options nosniff;
            add_header X-Content-Type-Options again;
            add_header X-Two one;
            add_header X-Two two always;
            return 200 "ok\\n";
        }
    }
`;
}

/** The status and the `x-` fields, as sent, of one h2c request. */
async function fields(port: number): Promise<string[]> {
  const session = connect(`http://127.0.0.1:${port}`);
  try {
    const raw = await new Promise<string[]>((resolve, reject) => {
      const stream = session.request({ ':path': '/' });
      stream.on('response', (_headers: unknown, _flags: number, rawHeaders: string[]) => resolve(rawHeaders));
      stream.on('error', reject);
      stream.resume();
      stream.end();
    });
    const out: string[] = [];
    for (let i = 0; i < raw.length; i += 2)
      if (raw[i] === ':status' || raw[i]!.startsWith('x-')) out.push(`${raw[i]}: ${raw[i + 1]}`);
    return out;
  } finally {
    session.close();
  }
}

describe('add_header over HTTP/2, replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(body);
  });

  after(() => both?.stop());

  // a stream whose head failed to go out is never answered: the timeout is that failure
  const options = { timeout: 10_000 };
  test(
    'a name added twice is two fields; a once-only name in node:http2 one field with both',
    options,
    async () => {
      const fromNginx = await fields(both.nginxPort);
      const twice = ['x-two: one', 'x-two: two'];
      assert.deepEqual(fromNginx, [
        ':status: 200',
        'x-content-type-options: nosniff',
        'x-content-type-options: again',
        ...twice,
      ]);
      const fromReplica = await fields(both.replicaPort);
      assert.deepEqual(fromReplica, [':status: 200', 'x-content-type-options: nosniff, again', ...twice]);
    },
  );
});
