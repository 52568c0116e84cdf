#!/usr/bin/env node
// The sources are TypeScript, run without a build step. A Node.js that strips types itself (22.18+,
// 24) runs them as they are; an older one (20) goes through tsx, a dev dependency.
if (process.features.typescript === undefined) {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    console.error(
      `limitswitch: Node.js ${process.versions.node} cannot run TypeScript by itself: use Node.js 24 (or 22.18+), or install the dev dependencies (npm ci) for tsx`,
    );
    process.exit(1);
  }
  register();
}
await import('../src/cli/main.ts');
