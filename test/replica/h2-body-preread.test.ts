/**
 * `http2_body_preread_size`, side by side with nginx: the stream window an HTTP/2 connection
 * advertises in its SETTINGS (INITIAL_WINDOW_SIZE), nginx's 64k without it.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

let both: SideBySide;

before(async () => {
  both = await startSideBySide(
    (port) => `
    server {
        listen 127.0.0.1:${port} http2;
        http2_body_preread_size 10k;
        location / { return 200 "TEST\\n"; }
    }`,
  );
});

after(async () => {
  await both?.stop();
});

/** The INITIAL_WINDOW_SIZE of the server's SETTINGS on a prior-knowledge h2c connection. */
async function streamWindow(port: number): Promise<number | undefined> {
  const session = connect(`http://127.0.0.1:${port}`);
  try {
    const settings = await new Promise<{ initialWindowSize?: number }>((resolve, reject) => {
      session.once('remoteSettings', resolve);
      session.once('error', reject);
    });
    return settings.initialWindowSize;
  } finally {
    session.close();
  }
}

for (const side of ['nginx', 'replica'] as const) {
  describe(`${side}: http2_body_preread_size`, () => {
    it('is the stream window advertised', async () => {
      assert.equal(await streamWindow(side === 'nginx' ? both.nginxPort : both.replicaPort), 10 * 1024);
    });
  });
}
